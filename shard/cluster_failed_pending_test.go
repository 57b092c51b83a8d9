package shard_test

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// TestFailedNodeIsNotRetiredBeforeTheClusterIsAsked: a refresh that
// installs a table without a node that failed asks the cluster only
// afterwards whether it still lists the node (kept as failed) or forgot
// it. A health tick in between (settleNodes) must not retire it: its
// NodeRetired would say its address left (its metric series deleted),
// and it would come back at the end of the refresh without a NodeDown.
// The test runs the tick exactly there.
func TestFailedNodeIsNotRetiredBeforeTheClusterIsAsked(t *testing.T) {
	ctx := context.Background()
	rc, cfg := failedNodeCluster(t)
	var (
		mu      sync.Mutex
		retired []shard.NodeEvent
	)
	cfg.Hooks = &shard.Hooks{NodeState: func(ev shard.NodeEvent) {
		if ev.Kind == shard.NodeRetired {
			mu.Lock()
			retired = append(retired, ev)
			mu.Unlock()
		}
	}}
	c := newClient(t, cfg)
	var ticks atomic.Int32
	shard.BeforeKeepFailed(func(hc *shard.Client) {
		if hc == c {
			shard.SettleNodes(c)
			ticks.Add(1)
		}
	})
	t.Cleanup(func() { shard.BeforeKeepFailed(nil) })

	victim, _ := failReplica(t, rc)
	require.NoError(t, c.Refresh(ctx))
	require.Positive(t, ticks.Load(), "no refresh installed a table without the failed replica")
	mu.Lock()
	got := slices.Clone(retired)
	mu.Unlock()
	for _, ev := range got {
		require.NotEqual(t, victim.Addr, ev.Node.Addr, "the failed replica, still listed by the cluster, retired: %v", ev)
	}
	require.NotEmpty(t, nodeStats(c, victim.Addr), "the failed replica is kept")
}
