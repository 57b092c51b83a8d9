package reshard_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// migrateCalls returns how many MIGRATE commands a server has run (INFO
// commandstats): a server-side count of client-side moves.
func migrateCalls(t *testing.T, s *redistest.Server) int {
	t.Helper()
	info, err := s.Do("INFO", "commandstats")
	require.NoError(t, err)
	for _, line := range strings.Split(info, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_migrate:calls="); ok {
			n, _, _ := strings.Cut(rest, ",")
			v, err := strconvAtoi(n, nil)
			require.NoError(t, err)
			return v
		}
	}
	return 0
}

// TestFenceKeepsAnOldOnlyProcessCorrect is phase 1 of the protocol with
// two processes: one already on the migrating config, one still on the
// old topology alone. Before the fence, the migrating one must not move
// keys, or the old-only one misses them and its INCRs are deleted by the
// next move (the new owner's copy wins).
func TestFenceKeepsAnOldOnlyProcessCorrect(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 4, redistest.Options{})
	names := []string{"s0", "s1", "s2", "s3"}
	from, to := mustParse(t, ringURL(servers[:3], names[:3], nil)), mustParse(t, ringURL(servers, names, nil))
	from.Pool.ClientName, to.Pool.ClientName = shard.AutoClientName, shard.AutoClientName

	var moving []string // counters whose owner changes
	for i := 0; len(moving) < 40; i++ {
		k := fmt.Sprintf("fc:%d", i)
		if owner(t, from, k) != owner(t, to, k) {
			moving = append(moving, k)
		}
	}
	want := map[string]int{}
	incr := func(c *shard.Client, who string) {
		t.Helper()
		for _, k := range moving {
			v, err := redis.Int(c.Do(ctx, "INCR", k))
			require.NoError(t, err, "%s INCR %s", who, k)
			want[k]++
			require.Equal(t, want[k], v, "%s INCR %s continues the counter", who, k)
		}
	}

	oldOnly := newClient(t, from)
	mcfg := to
	f := from
	f.Pool.ClientName = ""
	mcfg.Migration = &shard.Migration{From: &f}
	mig := newClient(t, mcfg)
	info, ok := mig.Migration()
	require.True(t, ok)
	require.Equal(t, shard.PhaseWaiting, info.Phase)

	incr(oldOnly, "old-only")
	incr(mig, "migrating") // touches every moving key: nothing may move yet
	incr(oldOnly, "old-only")
	n, err := strconvAtoi(servers[3].Do("DBSIZE"))
	require.NoError(t, err)
	assert.Zero(t, n, "no key reached the new shard before the fence")
	for _, s := range servers[:3] {
		assert.Zero(t, migrateCalls(t, s), "no MIGRATE before the fence on %s", s.Addr)
	}

	// The fence is refused while the old-only process is connected, and
	// the refusal names its connection.
	err = reshard.Arm(ctx, from, to, reshard.ArmOptions{Timeout: 5 * time.Second})
	var ce *reshard.ClientsError
	require.ErrorAs(t, err, &ce)
	require.NotEmpty(t, ce.Conns)
	found := false
	for _, c := range ce.Conns {
		cn, ok := shard.ParseClientName(c.Name)
		if ok && !cn.Migrating && cn.Topology == shard.TopologyID(from) {
			found = true
			assert.Contains(t, c.Reason, "alone")
		}
	}
	assert.True(t, found, "the old-only connection is named: %v", err)
	for _, s := range servers[:3] {
		v, err := s.Do("EXISTS", shard.FenceKey(info.FromID, info.ToID))
		require.NoError(t, err)
		assert.Equal(t, "0", v, "no marker set on a refusal")
	}
	_, err = reshard.Move(ctx, reshard.Options{From: from, To: to})
	require.ErrorAs(t, err, &ce, "the mover refuses too")

	// The old-only process switches to the migrating config; the fence
	// goes up; both processes move on touch.
	require.NoError(t, oldOnly.StartMigration(ctx, to))
	require.NoError(t, reshard.Arm(ctx, from, to, reshard.ArmOptions{Timeout: 30 * time.Second}))
	for _, c := range []*shard.Client{oldOnly, mig} {
		waitArmed(t, c, "the client to see the armed marker")
	}
	incr(mig, "migrating")
	incr(oldOnly, "formerly old-only")
	n, err = strconvAtoi(servers[3].Do("DBSIZE"))
	require.NoError(t, err)
	assert.Positive(t, n, "keys moved to the new shard once armed")

	rep, err := reshard.Move(ctx, reshard.Options{From: from, To: to})
	require.NoError(t, err)
	require.NotNil(t, rep.Verify)
	assert.Zero(t, rep.Verify.Misplaced)
	var allServers []*redistest.Server
	allServers = append(allServers, servers...)
	for _, k := range moving {
		for _, c := range []*shard.Client{oldOnly, mig} {
			v, err := redis.Int(c.Do(ctx, "GET", k))
			require.NoError(t, err)
			assert.Equal(t, want[k], v, "counter %s equals its acknowledged increments", k)
		}
		var at []string
		for _, s := range allServers {
			e, err := s.Do("EXISTS", k)
			require.NoError(t, err)
			if e == "1" {
				at = append(at, s.Addr)
			}
		}
		assert.Equal(t, []string{owner(t, to, k)}, at, "key %s sits at its new owner only", k)
	}
}
