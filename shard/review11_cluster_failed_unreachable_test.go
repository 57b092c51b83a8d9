package shard_test

import (
	"context"
	"testing"
	"time"

	"github.com/shardis/shardis/pool"
	"github.com/stretchr/testify/require"
)

// A failed replica that the cluster still lists is kept by the client,
// checked and reported down, until the cluster forgets it; a refresh
// learns that from a master's CLUSTER NODES. A refresh whose masters
// cannot be asked (not marked down yet, as here with no health checks:
// the refresh asks them) learns nothing about the replica, which must
// stay: had the masters' silence counted as a refusal for good (as an
// ACL without CLUSTER NODES and CLUSTER SHARDS is), the replica would
// retire, a NodeRetired telling every hook that its address left, and
// its restart would go unseen until a later refresh.

// TestReview11FailedNodeStaysWhileTheMastersHang: every master hangs
// (stopped, well within the cluster's node timeout): CLUSTER NODES
// times out on each.
func TestReview11FailedNodeStaysWhileTheMastersHang(t *testing.T) {
	ctx := context.Background()
	rc, cfg := failedNodeCluster(t)
	cfg.Health.Interval = -1 // nothing marks the masters down: they are asked
	cfg.Pool = pool.Options{DialTimeout: 300 * time.Millisecond, ReadTimeout: 300 * time.Millisecond, WriteTimeout: time.Second}
	c := newClient(t, cfg)
	victim, masters := failReplica(t, rc)
	require.NoError(t, c.Refresh(ctx))
	require.NotEmpty(t, nodeStats(c, victim.Addr), "the failed replica, still listed by the cluster, is kept")

	for _, m := range masters {
		pauseUntilCleanup(t, m)
	}
	err := c.Refresh(ctx) // the replicas answer
	kept := len(nodeStats(c, victim.Addr)) > 0
	for _, m := range masters {
		require.NoError(t, m.Resume())
	}
	require.NoError(t, err)
	require.True(t, kept, "a refresh whose masters did not answer in time keeps the failed replica")
}

// TestReview11FailedNodeStaysWhileTheMastersRefuseConnections: every
// master is gone (killed; the refresh comes well within the cluster's
// node timeout, before any failover): each dial to it is refused.
func TestReview11FailedNodeStaysWhileTheMastersRefuseConnections(t *testing.T) {
	ctx := context.Background()
	rc, cfg := failedNodeCluster(t)
	cfg.Health.Interval = -1 // nothing marks the masters down: they are asked
	// Every connection is dialed afresh: no idle one of before the kill
	// fails instead of the dial.
	cfg.Pool = pool.Options{MaxConnLifetime: time.Millisecond, DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second}
	c := newClient(t, cfg)
	victim, masters := failReplica(t, rc)
	require.NoError(t, c.Refresh(ctx))
	require.NotEmpty(t, nodeStats(c, victim.Addr), "the failed replica, still listed by the cluster, is kept")

	for _, m := range masters {
		require.NoError(t, m.Kill())
	}
	require.NoError(t, c.Refresh(ctx)) // the replicas answer
	require.NotEmpty(t, nodeStats(c, victim.Addr), "a refresh whose masters refused every connection keeps the failed replica")
}
