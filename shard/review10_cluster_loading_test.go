package shard_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// replicaEntry returns the Stats entry of the read-only connections to
// the replica at addr.
func replicaEntry(t *testing.T, c *shard.Client, addr string) shard.NodeStats {
	t.Helper()
	for _, ns := range c.Stats().Nodes {
		if ns.Node.Addr == addr && ns.ReadOnly {
			return ns
		}
	}
	t.Fatalf("no replica entry for %s in %+v", addr, c.Stats().Nodes)
	return shard.NodeStats{}
}

// A replica that answers LOADING (reloading its data: a restart with a
// big RDB, a full resync) cannot serve a read until it has loaded, yet
// only its read that got the reply went to the master: every later read
// went to the replica first and paid a round trip there, until the
// health checks had failed FailureLimit times in a row. A LOADING (or
// MASTERDOWN) reply to a replica read now marks the replica down at
// once (as its failing health checks would, later); the health checks
// bring it back when it answers PING again, once loaded.
func TestReview10ClusterLoadingReplicaIsSkippedUntilLoaded(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster")
	}
	ctx := context.Background()
	rc := redistest.StartClusterTB(t, 3, 1, redistest.Options{})
	cfg := clusterConfig(rc.Seeds()...)
	cfg.Cluster.ReadFrom = shard.ReadReplicaRandom
	// Health checks alone take long to mark the node down: what marks
	// it is the reply to a read.
	cfg.Health.FailureLimit = 200
	c := newClient(t, cfg)
	m := rc.Masters()[0]
	rep, err := rc.ReplicaOf(m)
	require.NoError(t, err)
	key, _ := keyOnMaster(t, rc, m, "review10loading")
	for i := 0; i < 300; i++ {
		_, err := c.Do(ctx, "SET", fmt.Sprintf("%s:%d", key, i), fmt.Sprintf("%d:%01000d", i, 0))
		require.NoError(t, err)
	}
	_, err = direct(t, m.Addr).Do("WAIT", 1, 2000)
	require.NoError(t, err)
	waitFor(t, 15*time.Second, "the replica to serve reads", func() bool {
		_ = c.Refresh(ctx)
		before := replicaEntry(t, c, rep.Addr).Commands
		_, err := c.Do(ctx, "GET", key+":1")
		require.NoError(t, err)
		return replicaEntry(t, c, rep.Addr).Commands > before
	})

	probe, reloaded := reloadSlowly(t, rep, key, 20*time.Millisecond) // 6 s of LOADING

	start := time.Now()
	before := replicaEntry(t, c, rep.Addr).Commands
	const reads = 10
	for i := range reads {
		v, err := redis.String(c.Do(ctx, "GET", fmt.Sprintf("%s:%d", key, i)))
		require.NoError(t, err)
		require.Equal(t, fmt.Sprintf("%d:%01000d", i, 0), v)
	}
	t.Logf("%d reads in %v, %d sent to the replica", reads, time.Since(start), replicaEntry(t, c, rep.Addr).Commands-before)
	sent := replicaEntry(t, c, rep.Addr).Commands - before
	require.LessOrEqual(t, sent, int64(1), "of %d reads while the replica was loading, %d went there first", reads, sent)
	_, err = probe.Do("GET", key)
	require.ErrorContains(t, err, "LOADING", "the replica was loading throughout")

	// Loaded, it serves reads again.
	require.NoError(t, reloaded())
	waitFor(t, 15*time.Second, "reads served by the loaded replica", func() bool {
		before := replicaEntry(t, c, rep.Addr).Commands
		_, err := c.Do(ctx, "GET", key+":1")
		require.NoError(t, err)
		return replicaEntry(t, c, rep.Addr).Commands > before
	})
}
