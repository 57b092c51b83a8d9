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

// masterStatsOf returns the Stats entry of the node at addr that is not
// a replica-read (READONLY) entry.
func masterStatsOf(t *testing.T, c *shard.Client, addr string) shard.NodeStats {
	t.Helper()
	for _, n := range c.Stats().Nodes {
		if n.Node.Addr == addr && !n.ReadOnly {
			return n
		}
	}
	t.Fatalf("no node %s", addr)
	return shard.NodeStats{}
}

// TestReview9TransactionCommandsAreCounted: NodeStats.Commands counts
// the commands sent to a node (shardis_node_commands_total,
// shardis.client.commands). A Client.Tx's WATCH, Tx.Do and MULTI ...
// EXEC, and what a Conn sends, reached the node uncounted: a node that
// served only transactions showed no traffic at all.
func TestReview9TransactionCommandsAreCounted(t *testing.T) {
	s := redistest.StartTB(t, redistest.Options{})
	cfg := ringConfig([]*redistest.Server{s})
	cfg.Health.Interval = -1
	c := newClient(t, cfg)
	ctx := context.Background()

	before := masterStatsOf(t, c, s.Addr).Commands
	_, err := c.Tx(ctx, []string{"r9c"}, func(tx *shard.Tx) error {
		if _, err := tx.Do("GET", "r9c"); err != nil {
			return err
		}
		return tx.Queue("SET", "r9c", "v")
	})
	require.NoError(t, err)
	// WATCH, GET, then MULTI, SET, EXEC.
	assert.Equal(t, int64(5), masterStatsOf(t, c, s.Addr).Commands-before, "a Client.Tx")

	before = masterStatsOf(t, c, s.Addr).Commands
	conn := c.Conn()
	defer conn.Close()
	_, err = conn.Do("WATCH", "r9c")
	require.NoError(t, err)
	require.NoError(t, conn.Send("MULTI"))
	require.NoError(t, conn.Send("SET", "r9c", "w"))
	_, err = redis.Values(conn.Do("EXEC"))
	require.NoError(t, err)
	_, err = conn.Do("GET", "r9c")
	require.NoError(t, err)
	// WATCH, MULTI, SET, EXEC, GET.
	assert.Equal(t, int64(5), masterStatsOf(t, c, s.Addr).Commands-before, "a Conn")
}
