package shard_test

import (
	"context"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview9TransactionDialFailureIsANodeError: NodeStats.Errors counts
// the connection-level failures of a node (shardis_node_errors_total).
// A Client.Tx that could not open a connection to its node counted
// nothing, where a Do counts one: a node that served transactions
// looked healthy in the metrics while every transaction failed there.
func TestReview9TransactionDialFailureIsANodeError(t *testing.T) {
	s := redistest.StartTB(t, redistest.Options{})
	cfg := ringConfig([]*redistest.Server{s})
	cfg.Health.Interval = -1
	c := newClient(t, cfg)
	ctx := context.Background()
	require.NoError(t, s.Kill())

	before := masterStatsOf(t, c, s.Addr).Errors
	_, err := c.Do(ctx, "GET", "r9e")
	require.Error(t, err)
	require.Equal(t, int64(1), masterStatsOf(t, c, s.Addr).Errors-before, "a Do")

	before = masterStatsOf(t, c, s.Addr).Errors
	_, err = c.Tx(ctx, []string{"r9e"}, func(tx *shard.Tx) error { return tx.Queue("SET", "r9e", "v") })
	var ne *shard.NodeError
	require.ErrorAs(t, err, &ne)
	assert.Equal(t, int64(1), masterStatsOf(t, c, s.Addr).Errors-before, "a Client.Tx")
}

// TestReview9ConnTransactionDialFailureIsANodeError: the same for a
// Conn whose WATCH could not get a connection to its keys' node.
func TestReview9ConnTransactionDialFailureIsANodeError(t *testing.T) {
	s := redistest.StartTB(t, redistest.Options{})
	cfg := ringConfig([]*redistest.Server{s})
	cfg.Health.Interval = -1
	c := newClient(t, cfg)
	require.NoError(t, s.Kill())

	before := masterStatsOf(t, c, s.Addr).Errors
	conn := c.Conn()
	defer conn.Close()
	_, err := conn.Do("WATCH", "r9e")
	var ne *shard.NodeError
	require.ErrorAs(t, err, &ne)
	assert.Equal(t, int64(1), masterStatsOf(t, c, s.Addr).Errors-before, "a Conn's WATCH")
}
