package shard_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A replica whose own view of the cluster is down (cut off from the
// majority of the masters by a partition the client is not on the wrong
// side of; here: it forgot another master, so it sees that master's
// slots unserved) answers CLUSTERDOWN to every read, while its master,
// with the majority, serves them. The read goes to the master, as it does
// for a loading or dead replica; it used to go back to the same replica
// until MaxRetryWait and fail with a *RetryError.
func TestReview9ClusterReadFromAReplicaThatSeesTheClusterDownGoesToTheMaster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster")
	}
	ctx := context.Background()
	rc := redistest.StartClusterTB(t, 3, 1, redistest.Options{})
	masters := rc.Masters()
	m, other := masters[0], masters[1]
	rep, err := rc.ReplicaOf(m)
	require.NoError(t, err)
	key, _ := keyOnMaster(t, rc, m, "review9down")
	_, err = direct(t, m.Addr).Do("SET", key, "v")
	require.NoError(t, err)

	cfg := clusterConfig(rc.Seeds()...)
	cfg.Cluster.ReadFrom = shard.ReadReplicaRandom
	cfg.Cluster.MaxRetryWait = 2 * time.Second
	cfg.Health.Interval = -1 // the replica is never marked down: every read goes to it
	c := newClient(t, cfg)
	waitFor(t, 10*time.Second, "the replica to serve the key", func() bool {
		v, err := redis.String(c.Do(ctx, "GET", key))
		return err == nil && v == "v"
	})

	_, err = rep.Do("CLUSTER", "FORGET", nodeID(t, other))
	require.NoError(t, err)
	probe := direct(t, rep.Addr)
	_, err = probe.Do("READONLY")
	require.NoError(t, err)
	waitFor(t, 5*time.Second, "the replica to see the cluster down", func() bool {
		_, err := probe.Do("GET", key)
		return err != nil && strings.HasPrefix(err.Error(), "CLUSTERDOWN")
	})
	v, err := redis.String(direct(t, m.Addr).Do("GET", key))
	require.NoError(t, err, "the master serves the key")
	require.Equal(t, "v", v)

	for i := range 3 {
		start := time.Now()
		v, err := redis.String(c.Do(ctx, "GET", key))
		require.NoError(t, err, "read %d: the master serves it", i)
		assert.Equal(t, "v", v)
		assert.Less(t, time.Since(start), time.Second, "read %d", i)
	}
}
