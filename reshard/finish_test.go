package reshard_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// markers returns the value of the fence's marker on each server ("" for
// none).
func markers(t *testing.T, servers []*redistest.Server, key string) []string {
	t.Helper()
	out := make([]string, len(servers))
	for i, s := range servers {
		v, err := s.Do("GET", key)
		require.NoError(t, err)
		out[i] = v
	}
	return out
}

// TestFinishClearsTheFenceOnlyWhenSafe walks step 3 of the protocol: the
// markers must stay while a process still routes by the migration (Finish
// and the end of a move name its connection), while keys are misplaced,
// and go away once the process left the migration and every key is at its
// owner.
func TestFinishClearsTheFenceOnlyWhenSafe(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	names := []string{"s0", "s1", "s2"}
	from, to := mustParse(t, ringURL(servers[:2], names[:2], nil)), mustParse(t, ringURL(servers, names, nil))
	from.Pool.ClientName, to.Pool.ClientName = shard.AutoClientName, shard.AutoClientName
	plain := from
	plain.Pool.ClientName = ""
	fill(t, plain, "fin", 300)

	mcfg := to
	f := from
	f.Pool.ClientName = ""
	mcfg.Migration = &shard.Migration{From: &f}
	proc := newClient(t, mcfg)
	info, ok := proc.Migration()
	require.True(t, ok)
	key := shard.FenceKey(info.FromID, info.ToID)

	require.NoError(t, reshard.Arm(ctx, from, to, reshard.ArmOptions{Timeout: 30 * time.Second}))
	waitFor(t, 10*time.Second, "the process to arm", func() bool {
		i, _ := proc.Migration()
		return i.Phase == shard.PhaseArmed
	})

	// Misplaced keys: nothing is cleared (the process is there too; it
	// is named first).
	_, err := reshard.Finish(ctx, from, to)
	require.ErrorIs(t, err, reshard.ErrStillMigrating)

	// The move ends clean but the process still migrates: the markers
	// stay and the report names its beacons.
	rep, err := reshard.Move(ctx, reshard.Options{From: from, To: to, Finish: true})
	require.NoError(t, err)
	require.NotNil(t, rep.Verify)
	assert.Zero(t, rep.Verify.Misplaced)
	assert.False(t, rep.Finished)
	require.NotEmpty(t, rep.Remaining)
	for _, cc := range rep.Remaining {
		cn, ok := shard.ParseClientName(cc.Name)
		require.True(t, ok, cc.Name)
		assert.Equal(t, proc.InstanceID(), cn.Instance, "only the process's beacons are named: %+v", cc)
		assert.Contains(t, cc.Reason, "still routes by the migration")
	}
	for _, v := range markers(t, servers[:2], key) {
		p, _, ok := shard.ParseFenceValue(v)
		assert.True(t, ok && p == shard.PhaseArmed, "marker kept: %q", v)
	}

	_, err = reshard.Finish(ctx, from, to)
	var ce *reshard.ClientsError
	require.ErrorAs(t, err, &ce)
	assert.ErrorIs(t, err, reshard.ErrClients)
	assert.Contains(t, err.Error(), "still use the migration")
	assert.Contains(t, err.Error(), proc.InstanceID(), "the refusal names the connection")
	for _, v := range markers(t, servers[:2], key) {
		assert.NotEmpty(t, v, "marker kept while the process migrates")
	}

	// The process leaves the migration (step 3): Finish clears.
	require.NoError(t, proc.FinishMigration())
	var v *reshard.VerifyReport
	waitFor(t, 10*time.Second, "Finish to succeed once the beacons are gone", func() bool {
		v, err = reshard.Finish(ctx, from, to)
		return err == nil
	})
	require.NotNil(t, v)
	assert.Zero(t, v.Misplaced)
	assert.EqualValues(t, 300, v.Scanned)
	assert.Equal(t, []string{"", ""}, markers(t, servers[:2], key), "markers deleted on every old node")
	n, err := redis.Int(proc.Do(ctx, "GET", "fin:7"))
	require.NoError(t, err)
	assert.Equal(t, 7, n)
}

// TestFinishRefusesMisplacedKeys: with no process left on the migration
// but keys not moved, Finish keeps the markers and says to run the mover.
func TestFinishRefusesMisplacedKeys(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	names := []string{"s0", "s1", "s2"}
	from, to := mustParse(t, ringURL(servers[:2], names[:2], nil)), mustParse(t, ringURL(servers, names, nil))
	fill(t, from, "mis", 200)
	info := func() shard.MigrationInfo {
		cfg := to
		f := from
		cfg.Migration = &shard.Migration{From: &f, Armed: true}
		c := newClient(t, cfg)
		i, _ := c.Migration()
		c.Close()
		return i
	}()
	key := shard.FenceKey(info.FromID, info.ToID)
	for _, s := range servers[:2] {
		_, err := s.Do("SET", key, shard.FenceValue(shard.PhaseArmed, time.Now()))
		require.NoError(t, err)
	}
	var (
		v   *reshard.VerifyReport
		err error
	)
	waitFor(t, 10*time.Second, "the helper client's beacons to go", func() bool {
		v, err = reshard.Finish(ctx, from, to)
		return !errors.Is(err, reshard.ErrStillMigrating)
	})
	require.ErrorIs(t, err, reshard.ErrMisplaced)
	assert.Contains(t, err.Error(), "run the mover again")
	require.NotNil(t, v)
	assert.Positive(t, v.Misplaced)
	for i, m := range markers(t, servers[:2], key) {
		assert.NotEmpty(t, m, "marker kept on %s", servers[i].Addr)
	}
	rep, err := reshard.Move(ctx, reshard.Options{From: from, To: to, Finish: true})
	require.NoError(t, err)
	assert.True(t, rep.Finished, "no process migrates: the move's end clears: %+v", rep.Remaining)
	assert.Equal(t, []string{"", ""}, markers(t, servers[:2], key))
}
