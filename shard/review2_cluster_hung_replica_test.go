package shard_test

import (
	"context"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A replica read whose replica does not answer within the read timeout
// (a hung replica, not yet marked down) is sent to the slot's master,
// which serves it: the command is read-only, so sending it again is safe,
// and it goes to another node, so it does not wait as long once more. It
// used to fail with the replica's timeout although the master was fine.
func TestReview2ClusterReadFromAHungReplicaGoesToTheMaster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster")
	}
	ctx := context.Background()
	rc, rep, key := keyWithReplica(t, "review2hung")

	for _, auto := range []bool{false, true} {
		name := "pooled"
		if auto {
			name = "auto-pipelined"
		}
		t.Run(name, func(t *testing.T) {
			cfg := clusterConfig(rc.Seeds()...)
			cfg.Cluster.ReadFrom = shard.ReadReplicaRandom
			cfg.Pool.ReadTimeout = 500 * time.Millisecond
			cfg.Health.Interval = -1 // the replica is never marked down: every read goes to it
			cfg.DisableAutoPipeline = !auto
			c := newClient(t, cfg)
			// The replica serves the key first.
			waitFor(t, 10*time.Second, "the replica to serve the key", func() bool {
				v, err := redis.String(c.Do(ctx, "GET", key))
				return err == nil && v == "v"
			})
			var before int64
			for _, n := range c.Stats().Nodes {
				if n.ReadOnly && n.Node.Addr == rep.Addr {
					before = n.Commands
				}
			}
			require.Positive(t, before, "reads went to the replica")

			pauseUntilCleanup(t, rep)
			start := time.Now()
			v, err := redis.String(c.Do(ctx, "GET", key))
			took := time.Since(start)
			require.NoError(t, rep.Resume())
			require.NoError(t, err, "the master serves the read")
			assert.Equal(t, "v", v)
			assert.Less(t, took, 5*time.Second)
		})
	}
}

// A replica read whose replica is dead (refused dials, or a connection
// reset) goes to the master too, also when no health check marks the
// replica down: it used to go back to the same replica until MaxRetryWait
// ran out, and fail with a *RetryError although the master was fine.
func TestReview2ClusterReadFromADeadReplicaGoesToTheMaster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster")
	}
	ctx := context.Background()
	rc, rep, key := keyWithReplica(t, "review2dead")
	cfg := clusterConfig(rc.Seeds()...)
	cfg.Cluster.ReadFrom = shard.ReadReplicaRandom
	cfg.Cluster.MaxRetryWait = 3 * time.Second
	cfg.Health.Interval = -1 // the replica is never marked down: every read goes to it
	c := newClient(t, cfg)
	waitFor(t, 10*time.Second, "the replica to serve the key", func() bool {
		v, err := redis.String(c.Do(ctx, "GET", key))
		return err == nil && v == "v"
	})
	require.NoError(t, rep.Kill())
	for i := range 3 {
		start := time.Now()
		v, err := redis.String(c.Do(ctx, "GET", key))
		require.NoError(t, err, "read %d: the master serves it", i)
		assert.Equal(t, "v", v)
		assert.Less(t, time.Since(start), 2*time.Second, "read %d", i)
	}
}

// keyWithReplica starts a cluster of three masters with a replica each,
// sets a key of the first master (prefix names it) to "v" and returns the
// cluster, that master's replica and the key.
func keyWithReplica(t *testing.T, prefix string) (*redistest.Cluster, *redistest.Server, string) {
	t.Helper()
	rc := redistest.StartClusterTB(t, 3, 1, redistest.Options{})
	m := rc.Masters()[0]
	rep, err := rc.ReplicaOf(m)
	require.NoError(t, err)
	key, _ := keyOnMaster(t, rc, m, prefix)
	_, err = direct(t, m.Addr).Do("SET", key, "v")
	require.NoError(t, err)
	return rc, rep, key
}
