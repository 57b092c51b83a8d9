package shard_test

import (
	"context"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/stretchr/testify/require"
)

// TestReview8RefreshAsksNodesMarkedDownLast: every node of the cluster
// went down and was marked so by the health checks; all but the seed came
// back. A refresh asked the nodes not marked down and the seeds, never
// the nodes marked down: until the next health check (a whole Interval)
// Client.Refresh failed with only the dead seed tried, although two
// nodes answered. The nodes marked down are now asked last.
func TestReview8RefreshAsksNodesMarkedDownLast(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster")
	}
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{NodeTimeout: time.Minute})
	ms := rc.Masters()
	require.Len(t, ms, 3)
	cfg := clusterConfig(ms[0].Addr)
	// Checks far apart, so that none runs between the restarts and the
	// refresh: the nodes stay marked down meanwhile.
	cfg.Health.Interval = 4 * time.Second
	cfg.Health.FailureLimit = 1
	cfg.Cluster.RefreshInterval = -1
	c := newClient(t, cfg)
	for _, m := range ms {
		require.NoError(t, m.Kill())
	}
	waitFor(t, 20*time.Second, "every node marked down", func() bool {
		down := 0
		for _, st := range c.Stats().Nodes {
			if st.Down {
				down++
			}
		}
		return down == 3
	})
	require.NoError(t, ms[1].Restart())
	require.NoError(t, ms[2].Restart())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	down := 0
	for _, st := range c.Stats().Nodes {
		if st.Down {
			down++
		}
	}
	require.Equal(t, 3, down, "a health check ran before the refresh: the test proves nothing")
	require.NoError(t, c.Refresh(ctx), "two nodes answer")
}
