package reshard_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview12WhichOldOnlyProcessesTheCheckSees pins what the clients
// check (CheckClients, and Arm and Move before arming) can see of a
// process that routes by the old topology alone, as docs/resharding.md
// ("What is not guaranteed") states it: CLIENT LIST shows only open
// connections. One connection on any old node is enough (a process that
// has used one shard of three is named there, and refused); health
// checks (on by default) keep one on every node; a process with health
// checks off that holds no connection at all (it has not sent a command
// yet, or its idle connections closed) is not seen.
func TestReview12WhichOldOnlyProcessesTheCheckSees(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 4, redistest.Options{})
	names := []string{"s0", "s1", "s2", "s3"}
	from := mustParse(t, ringURL(servers[:3], names[:3], nil))
	to := mustParse(t, ringURL(servers, names, nil))

	oldOnly := func(health time.Duration) *shard.Client {
		cfg := from
		cfg.Pool.ClientName = shard.AutoClientName
		cfg.Health.Interval = health
		return newClient(t, cfg)
	}
	named := func(err error) map[string]int { // old node -> connections of processes on the old topology alone
		out := map[string]int{}
		var ce *reshard.ClientsError
		if errors.As(err, &ce) {
			for _, c := range ce.Conns {
				if strings.Contains(c.Reason, "alone") {
					out[c.Node]++
				}
			}
		}
		return out
	}

	// Health checks off, no command sent: nothing on the servers.
	quiet := oldOnly(-1)
	err := reshard.CheckClients(ctx, from, to, false)
	assert.NoError(t, err, "a process with no connection is not seen (docs/resharding.md says so: update it if this changes)")

	// One command, to one shard: named on that node alone, and refused.
	key := ""
	for i := 0; key == ""; i++ {
		if k := fmt.Sprintf("inv:%d", i); owner(t, from, k) == servers[1].Addr {
			key = k
		}
	}
	_, err = quiet.Do(ctx, "GET", key)
	require.NoError(t, err)
	err = reshard.CheckClients(ctx, from, to, false)
	require.Error(t, err, "a process on the old topology with a connection on one old node")
	assert.True(t, errors.Is(err, reshard.ErrClients), "%v", err)
	assert.Equal(t, map[string]int{servers[1].Addr: 1}, named(err), "%v", err)
	require.NoError(t, quiet.Close())
	waitFor(t, 5*time.Second, "the closed process's connection to go", func() bool {
		return reshard.CheckClients(ctx, from, to, false) == nil
	})

	// Health checks on, no command sent: their PINGs keep a connection on
	// every old node.
	oldOnly(200 * time.Millisecond)
	waitFor(t, 10*time.Second, "the health checks' connections", func() bool {
		return len(named(reshard.CheckClients(ctx, from, to, false))) == 3
	})
	err = reshard.Arm(ctx, from, to, reshard.ArmOptions{Timeout: 5 * time.Second})
	assert.True(t, errors.Is(err, reshard.ErrClients), "arming beside a process on the old topology alone: %v", err)
}
