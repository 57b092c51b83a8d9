package shard_test

import (
	"context"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/stretchr/testify/require"
)

// TestReview5ClusterFailedNodesDoNotWaitOnAHungMaster: the client keeps a
// failed replica that the cluster still lists, so each refresh asks a
// master for CLUSTER NODES. The first master hangs (paused, well within
// the cluster's node timeout; no health checks mark it down). The
// refresh gets its table from another node at once, and must not then
// wait on the hung master for CLUSTER NODES while the other masters
// answer: the masters were asked one after the other, each for up to a
// dial and a read timeout, and everything waiting on the refresh waited
// as long.
func TestReview5ClusterFailedNodesDoNotWaitOnAHungMaster(t *testing.T) {
	ctx := context.Background()
	rc, cfg := failedNodeCluster(t)
	cfg.Health.Interval = -1
	cfg.Pool = pool.Options{DialTimeout: 500 * time.Millisecond, ReadTimeout: 3 * time.Second, WriteTimeout: time.Second}
	c := newClient(t, cfg)

	victim, masters := failReplica(t, rc)
	require.NoError(t, c.Refresh(ctx))
	require.NotEmpty(t, nodeStats(c, victim.Addr), "the failed replica, still listed by the cluster, is kept")

	first := c.Nodes()[0].Addr
	var hung *redistest.Server
	for _, m := range masters {
		if m.Addr == first {
			hung = m
		}
	}
	require.NotNil(t, hung)
	pauseUntilCleanup(t, hung)
	start := time.Now()
	require.NoError(t, c.Refresh(ctx))
	took := time.Since(start)
	require.NoError(t, hung.Resume())
	require.Less(t, took, 1500*time.Millisecond, "the refresh waited on the hung master")
}
