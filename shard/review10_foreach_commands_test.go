package shard_test

import (
	"context"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview10ForEachShardCommandsAreCounted: NodeStats.Commands counts
// the commands sent to a node (shardis_node_commands_total,
// shardis.client.commands). The commands a ForEachShard or ForEachNode
// callback sent on its connection reached the node uncounted: a node
// busy with SCRIPT LOAD, FLUSHALL, INFO or a SCAN of its own through
// ForEachShard showed no traffic.
func TestReview10ForEachShardCommandsAreCounted(t *testing.T) {
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	cfg := ringConfig(servers)
	cfg.Health.Interval = -1
	c := newClient(t, cfg)
	ctx := context.Background()

	before := map[string]int64{}
	for _, s := range servers {
		before[s.Addr] = masterStatsOf(t, c, s.Addr).Commands
	}
	err := c.ForEachShard(ctx, func(ctx context.Context, _ shard.Node, conn redis.Conn) error {
		if _, err := conn.Do("SET", "r10fe", "v"); err != nil {
			return err
		}
		if _, err := redis.DoContext(conn, ctx, "GET", "r10fe"); err != nil {
			return err
		}
		if err := conn.Send("PING"); err != nil {
			return err
		}
		if err := conn.Send("DBSIZE"); err != nil {
			return err
		}
		if err := conn.Flush(); err != nil {
			return err
		}
		for range 2 {
			if _, err := conn.Receive(); err != nil {
				return err
			}
		}
		_, err := redis.DoWithTimeout(conn, 0, "ECHO", "x")
		return err
	})
	require.NoError(t, err)
	for _, s := range servers {
		// SET, GET, PING, DBSIZE, ECHO.
		assert.Equal(t, int64(5), masterStatsOf(t, c, s.Addr).Commands-before[s.Addr], "ForEachShard on %s", s.Addr)
	}

	before[servers[0].Addr] = masterStatsOf(t, c, servers[0].Addr).Commands
	err = c.ForEachNode(ctx, func(_ context.Context, _ shard.Node, conn redis.Conn) error {
		_, err := conn.Do("PING")
		return err
	})
	require.NoError(t, err)
	assert.Equal(t, int64(1), masterStatsOf(t, c, servers[0].Addr).Commands-before[servers[0].Addr], "ForEachNode")
}

// TestReview10ForEachShardDialFailureIsANodeError: NodeStats.Errors
// counts a node's connection-level failures, a refused dial among them,
// whether Do, a transaction or a Conn met it. A ForEachShard that could
// not open a connection to a node counted nothing there (and nothing
// towards FailureLimit): a node that refused every SCRIPT LOAD or INFO
// looked healthy in the metrics.
func TestReview10ForEachShardDialFailureIsANodeError(t *testing.T) {
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	cfg := ringConfig(servers)
	cfg.Health.Interval = -1
	c := newClient(t, cfg)
	dead := servers[0]
	require.NoError(t, dead.Kill())

	before := masterStatsOf(t, c, dead.Addr).Errors
	err := c.ForEachShard(context.Background(), func(ctx context.Context, _ shard.Node, conn redis.Conn) error {
		_, err := redis.DoContext(conn, ctx, "PING")
		return err
	})
	var ne *shard.NodeError
	require.ErrorAs(t, err, &ne)
	assert.Equal(t, dead.Addr, ne.Node.Addr)
	assert.Equal(t, int64(1), masterStatsOf(t, c, dead.Addr).Errors-before, "the refused dial")
	assert.Zero(t, masterStatsOf(t, c, servers[1].Addr).Errors, "the live node")
}
