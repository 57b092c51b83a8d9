package shard_test

import (
	"context"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// TestFailedNodeStaysWithoutClusterNodesPermission: a replica fails
// (stopped, flagged fail by the cluster, left out of the slot table) and
// the client's ACL user may not run CLUSTER NODES. The cluster still
// lists the node (CLUSTER SHARDS says so too), so the client keeps it:
// checked and reported down, as with the permission. It retired at once,
// so that its restart went unseen until the periodic refresh.
func TestFailedNodeStaysWithoutClusterNodesPermission(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster and waits for a node to be flagged fail")
	}
	ctx := context.Background()
	rc := redistest.StartClusterTB(t, 3, 1, redistest.Options{NodeTimeout: time.Second})
	require.Len(t, rc.Nodes, 6)
	for _, s := range rc.Nodes {
		_, err := s.Do("ACL", "SETUSER", "nonodes", "on", ">pw", "~*", "&*", "+@all", "-cluster|nodes")
		require.NoError(t, err)
	}
	cfg := clusterConfig(rc.Seeds()...)
	cfg.Pool.Username, cfg.Pool.Password = "nonodes", "pw"
	cfg.Cluster.RefreshInterval = -1
	c := newClient(t, cfg)

	reps := rc.Replicas()
	require.NotEmpty(t, reps)
	victim := reps[0]
	id := nodeID(t, victim)
	present := func() (listed, down bool) {
		ns := nodeStats(c, victim.Addr)
		return len(ns) > 0, len(ns) > 0 && ns[0].Down
	}
	listed, _ := present()
	require.True(t, listed, "the replica is in Stats to begin with")

	require.NoError(t, victim.Kill())
	var other *redistest.Server
	for _, m := range rc.Masters() {
		other = m
		break
	}
	waitFor(t, 30*time.Second, "the cluster to flag the replica fail", func() bool {
		nodes, err := other.Do("CLUSTER", "NODES")
		return err == nil && flagged(nodes, id, "fail")
	})
	require.NoError(t, c.Refresh(ctx))
	r, ok := c.Router().(*shard.ClusterRouter)
	require.True(t, ok)
	for _, n := range r.AllNodes() {
		require.NotEqual(t, victim.Addr, n.Addr, "the failed replica left the slot table")
	}
	listed, _ = present()
	require.True(t, listed, "the failed replica, still listed by the cluster, stays in Stats")
	waitFor(t, 10*time.Second, "the failed replica to be reported down", func() bool {
		_, down := present()
		return down
	})
}
