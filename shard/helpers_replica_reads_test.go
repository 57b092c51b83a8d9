package shard_test

import (
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// Set-up shared by the tests of reads served by a cluster's replicas.

// startReplicaCluster starts a cluster of its own, three masters with a
// replica each, and returns it, two of its masters a and b, and rep, a's
// replica. It skips the test in -short mode.
func startReplicaCluster(t *testing.T) (rc *redistest.Cluster, a, b, rep *redistest.Server) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts its own cluster")
	}
	rc = redistest.StartClusterTB(t, 3, 1, redistest.Options{})
	m := rc.Masters()
	require.Len(t, m, 3)
	rep, err := rc.ReplicaOf(m[0])
	require.NoError(t, err)
	return rc, m[0], m[1], rep
}

// replicaReadConfig returns a client configuration for rc that reads
// from a random replica of each slot.
func replicaReadConfig(rc *redistest.Cluster) shard.Config {
	cfg := clusterConfig(rc.Seeds()...)
	cfg.Cluster.ReadFrom = shard.ReadReplicaRandom
	return cfg
}

// waitReplicaExists waits for EXISTS of keys at the replica rep (asked
// READONLY) to count n: what the master wrote or dropped reached it.
func waitReplicaExists(t *testing.T, rep *redistest.Server, what string, n int, keys ...string) {
	t.Helper()
	args := make([]any, len(keys))
	for i, k := range keys {
		args[i] = k
	}
	waitFor(t, 10*time.Second, what, func() bool {
		conn := direct(t, rep.Addr)
		_, _ = conn.Do("READONLY")
		got, err := redis.Int(conn.Do("EXISTS", args...))
		return err == nil && got == n
	})
}
