package shard_test

import (
	"context"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/stretchr/testify/require"
)

// TestReview5ClusterRefreshSkipsHungNodes: the nodes a refresh asks first
// hang (paused: they accept connections and never answer), as the nodes
// of a frozen host or behind a partition that drops packets do, while the
// others answer at once. The refresh must still succeed from the nodes
// that answer: the hung ones shared one time budget (two dial timeouts
// and a read timeout), each took a whole read timeout of it, and the
// refresh failed without asking the nodes that would have answered.
func TestReview5ClusterRefreshSkipsHungNodes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster with replicas")
	}
	rc := redistest.StartClusterTB(t, 3, 1, redistest.Options{NodeTimeout: time.Minute})
	cfg := clusterConfig(rc.Seeds()...)
	cfg.Pool = pool.Options{DialTimeout: 500 * time.Millisecond, ReadTimeout: 500 * time.Millisecond, WriteTimeout: time.Second}
	cfg.Health.Interval = -1 // no health checks: nothing marks the hung nodes down
	cfg.Cluster.RefreshInterval = -1
	c := newClient(t, cfg)
	masters := c.Nodes()
	require.Len(t, masters, 3)
	// The masters come first in a refresh's order; pause all three.
	byAddr := map[string]*redistest.Server{}
	for _, s := range rc.Masters() {
		byAddr[s.Addr] = s
	}
	for _, m := range masters {
		s := byAddr[m.Addr]
		require.NotNil(t, s, m.Addr)
		pauseUntilCleanup(t, s)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	require.NoError(t, c.Refresh(ctx), "the replicas answer at once")
}
