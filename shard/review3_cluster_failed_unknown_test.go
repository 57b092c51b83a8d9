package shard_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestFailedNodeStaysWhileNoMasterAnswers: a failed replica that the
// cluster still lists is kept by the client. A refresh that comes while
// no master answers CLUSTER NODES (every master stalled and marked down;
// the replicas give the topology) learns nothing about it, so the replica
// must stay: it retired for good, as if the cluster had forgotten it.
func TestFailedNodeStaysWhileNoMasterAnswers(t *testing.T) {
	ctx := context.Background()
	rc, cfg := failedNodeCluster(t)
	cfg.Health.Timeout = 200 * time.Millisecond
	c := newClient(t, cfg)

	victim, masters := failReplica(t, rc)
	present := func(addr string) (listed, down bool) {
		ns := nodeStats(c, addr)
		return len(ns) > 0, len(ns) > 0 && ns[0].Down
	}
	require.NoError(t, c.Refresh(ctx))
	listed, _ := present(victim.Addr)
	require.True(t, listed, "the failed replica, still listed by the cluster, is kept")

	// Every master stalls (well within the cluster's node timeout, so
	// nothing fails over) until the client marks it down.
	for _, m := range masters {
		pauseUntilCleanup(t, m)
	}
	waitFor(t, 20*time.Second, "every master marked down", func() bool {
		for _, m := range masters {
			if _, down := present(m.Addr); !down {
				return false
			}
		}
		return true
	})
	require.NoError(t, c.Refresh(ctx)) // the replicas answer
	listed, _ = present(victim.Addr)
	for _, m := range masters {
		require.NoError(t, m.Resume())
	}
	require.True(t, listed, "a refresh that could not ask a master keeps the failed replica")
}
