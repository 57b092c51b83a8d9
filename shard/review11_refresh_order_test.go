package shard_test

import (
	"context"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// TestReview11RefreshAsksReplicasMarkedDownLast: a refresh asks the nodes
// not marked down first and those marked down last, but a replica's
// health is kept on its read-only entry, and the refresh looked only at
// the plain entry of each address, which a replica does not have: every
// replica counted as up. With the masters gone (killed, marked down) and
// all but one replica hung (stopped, marked down), the refresh asked the
// hung replicas first, each costing the hedge delay (100 ms) before the
// next was asked: 500 ms here before the one replica that answers, and a
// hedge delay more per hung replica in larger clusters. The replica not
// marked down is now asked first.
func TestReview11RefreshAsksReplicasMarkedDownLast(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster")
	}
	// No failover while the masters are away: the topology stays put.
	rc := redistest.StartClusterTB(t, 3, 2, redistest.Options{NodeTimeout: time.Minute})
	cfg := clusterConfig(rc.Seeds()...)
	cfg.Cluster.RefreshInterval = -1
	cfg.Health.Timeout = 200 * time.Millisecond
	c := newClient(t, cfg)

	r, ok := c.Router().(*shard.ClusterRouter)
	require.True(t, ok)
	all := r.AllNodes()
	require.Len(t, all, 9, "3 masters, 6 replicas")
	byAddr := map[string]*redistest.Server{}
	for _, s := range rc.Nodes {
		byAddr[s.Addr] = s
	}
	masters, replicas := all[:3], all[3:]
	for _, m := range masters {
		require.NotNil(t, byAddr[m.Addr])
		require.NoError(t, byAddr[m.Addr].Kill())
	}
	// Every replica but the last one the table lists hangs.
	hung := replicas[:len(replicas)-1]
	live := replicas[len(replicas)-1]
	for _, n := range hung {
		require.NotNil(t, byAddr[n.Addr])
		pauseUntilCleanup(t, byAddr[n.Addr])
	}
	waitFor(t, 30*time.Second, "the masters and the hung replicas marked down", func() bool {
		for _, m := range masters {
			if ns := nodeStats(c, m.Addr); len(ns) == 0 || !ns[0].Down {
				return false
			}
		}
		for _, n := range hung {
			if !replicaEntry(t, c, n.Addr).Down {
				return false
			}
		}
		return true
	})
	require.False(t, replicaEntry(t, c, live.Addr).Down, "the live replica is up")

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	err := c.Refresh(ctx)
	took := time.Since(start)
	t.Logf("refresh took %v", took)
	require.NoError(t, err, "the live replica answers")
	// Asked after the hung ones, it is asked no sooner than 5 hedge
	// delays (500 ms) in.
	require.Less(t, took, 300*time.Millisecond, "the refresh asked the replicas marked down before the one up")
}
