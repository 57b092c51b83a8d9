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

// TestReview3HooksHungReplicaReadIsARetry: in cluster mode a read whose
// replica did not answer within the read timeout is sent again to the
// slot's master at once (judge), so the Command hook reports the replica's
// attempt as a retry, not as a timeout that stands: the caller got its
// reply, yet the metrics showed a timed-out read.
func TestReview3HooksHungReplicaReadIsARetry(t *testing.T) {
	rc := redistest.StartClusterTB(t, 3, 1, redistest.Options{})
	masters, replicas := rc.Masters(), rc.Replicas()
	require.Len(t, masters, 3)
	require.Len(t, replicas, 3)
	rec := &recorder{}
	cfg := clusterConfig(rc.Seeds()...)
	cfg.Cluster.ReadFrom = shard.ReadReplicaRandom
	cfg.Pool.ReadTimeout = 300 * time.Millisecond
	cfg.Health.Interval = -1
	cfg.DisableAutoPipeline = true
	cfg.Hooks = rec.hooks()
	c := newClient(t, cfg)
	ctx := context.Background()
	key, _ := keyOnMaster(t, rc, masters[0], "r3replica")
	_, err := c.Do(ctx, "SET", key, "v")
	require.NoError(t, err)
	err = c.ForEachMaster(ctx, func(ctx context.Context, n shard.Node, conn redis.Conn) error {
		_, err := redis.DoContext(conn, ctx, "WAIT", 1, 2000)
		return err
	})
	require.NoError(t, err)
	v, err := redis.String(c.Do(ctx, "GET", key)) // a pooled connection to the replica is open
	require.NoError(t, err)
	require.Equal(t, "v", v)

	require.NoError(t, replicas[0].Pause())
	defer func() { require.NoError(t, replicas[0].Resume()) }()
	rec.reset()
	v, err = redis.String(c.Do(ctx, "GET", key))
	require.NoError(t, err)
	assert.Equal(t, "v", v)
	got := rec.snapshot()
	require.Len(t, got.commands, 2, "the replica's attempt, then the master's")
	assert.Equal(t, replicas[0].Addr, got.commands[0].Node.Addr)
	assert.Equal(t, shard.OutcomeRetry, got.commands[0].Outcome, "the replica's attempt: %v", got.commands[0].Err)
	assert.Equal(t, masters[0].Addr, got.commands[1].Node.Addr)
	assert.Equal(t, shard.OutcomeOK, got.commands[1].Outcome)
	require.Len(t, got.ops, 1)
	assert.Equal(t, shard.OutcomeOK, got.ops[0].Outcome)
}
