package shard_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// A replica dies and never comes back, and nobody removes it with CLUSTER
// FORGET: the cluster keeps listing it, failed, and the client keeps it
// marked down. The topology refreshes made while a node is down (every
// 5 s at first, to find a failed node back at a new address) must back
// off while nothing changes: 5 s, 10 s, 20 s, ... apart, not one every
// 5 s for the life of the process (about 8 in 40 s).
func TestReview17DownBackoffDeadReplica(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster")
	}
	ctx := context.Background()
	rc := redistest.StartClusterTB(t, 3, 1, redistest.Options{NodeTimeout: time.Second})
	ms := rc.Masters()
	require.Len(t, ms, 3)
	replica, err := rc.ReplicaOf(ms[0])
	require.NoError(t, err)
	id, err := redis.String(replica.Do("CLUSTER", "MYID"))
	require.NoError(t, err)

	cfg := clusterConfig(ms[0].Addr, ms[1].Addr, ms[2].Addr)
	cfg.Cluster.ReadFrom = shard.ReadReplicaRandom // the client keeps (and checks) the replica
	// Longer than the window counted below: no periodic refresh in it.
	cfg.Cluster.RefreshInterval = 2 * time.Minute
	c := newClient(t, cfg)
	_, err = c.Do(ctx, "SET", "downbackoff", "v")
	require.NoError(t, err)
	waitFor(t, 30*time.Second, "the client to list the replica, up", func() bool {
		for _, st := range c.Stats().Nodes {
			if st.Node.Addr == replica.Addr && st.ReadOnly && !st.Down {
				return true
			}
		}
		return false
	})

	require.NoError(t, replica.Kill())
	waitFor(t, 60*time.Second, "every master to flag the replica as failed", func() bool {
		for _, m := range ms {
			out, err := redis.String(m.Do("CLUSTER", "NODES"))
			if err != nil || !strings.Contains(nodeLine(out, id), "fail") {
				return false
			}
		}
		return true
	})
	waitFor(t, 30*time.Second, "the client to list the replica down", func() bool {
		for _, st := range c.Stats().Nodes {
			if st.Node.Addr == replica.Addr {
				return st.Down
			}
		}
		return false
	})

	// The failure asks for a refresh, and the first refreshes made while
	// the replica is down may see the cluster flag it (a change, which
	// starts the interval again at 5 s): count once three have run.
	downAt := c.Stats().Refreshes
	waitFor(t, 90*time.Second, "three refreshes since the replica was listed down", func() bool {
		return c.Stats().Refreshes >= downAt+3
	})
	before := c.Stats().Refreshes
	const window = 40 * time.Second
	time.Sleep(window) // the rate of refreshes over a window is what is measured
	n := c.Stats().Refreshes - before
	t.Logf("%d topology refreshes in %v with a replica down", n, window)
	// Every 5 s: about 8. Backing off (5, 10, 20, 40 s apart): at most 3.
	require.LessOrEqual(t, n, int64(3), "refreshes while a dead replica stays listed")
	// They back off, they do not stop: a node back at a new address must
	// still be found without the periodic refresh.
	require.GreaterOrEqual(t, n, int64(1), "refreshes while a dead replica stays listed")
	for _, st := range c.Stats().Nodes {
		if st.Node.Addr == replica.Addr {
			require.True(t, st.Down, "the dead replica is still listed down")
		}
	}
}
