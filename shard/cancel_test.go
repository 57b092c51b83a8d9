package shard_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// giveUpThenCheckReplies makes a GET give up (its context ends while the
// server is paused), resumes the server and checks that the late reply
// never reaches a later command of c.
func giveUpThenCheckReplies(t *testing.T, c *shard.Client, server *redistest.Server) {
	t.Helper()
	ctx := context.Background()
	_, err := c.Do(ctx, "SET", "cancel:a", "a")
	require.NoError(t, err)

	require.NoError(t, server.Pause())
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = c.Do(short, "GET", "cancel:a")
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), 500*time.Millisecond, "the caller returns when its context ends")
	require.NoError(t, server.Resume())

	// The abandoned GET's reply ("a") comes first; it must be dropped.
	for i := 0; i < 20; i++ {
		v := fmt.Sprint(i)
		_, err := c.Do(ctx, "SET", "cancel:b", v)
		require.NoError(t, err)
		got, err := redis.String(c.Do(ctx, "GET", "cancel:b"))
		require.NoError(t, err)
		require.Equal(t, v, got, "a reply meant for the cancelled GET came back")
	}
}

// A single command under a context that ends while the server is silent
// returns at once; its connection is closed rather than reused, so the
// late reply never reaches the next command.
func TestCancelledSingleCommandDoesNotShiftReplies(t *testing.T) {
	servers := redistest.StartNTB(t, 1, redistest.Options{})
	giveUpThenCheckReplies(t, newClient(t, ringConfig(servers)), servers[0])
}

// A context that ends after its command has finished, as a request's
// context does when the request is over, leaves the connection alone: it
// goes back to the pool and is reused.
func TestContextEndingAfterTheCommandKeepsTheConnection(t *testing.T) {
	servers := redistest.StartNTB(t, 1, redistest.Options{})
	cfg := ringConfig(servers)
	cfg.Health.Interval = -1 // no health checks borrowing connections
	c := newClient(t, cfg)
	for i := 0; i < 200; i++ {
		ctx, cancel := context.WithCancel(context.Background())
		_, err := c.Do(ctx, "SET", "reuse:k", i)
		cancel()
		require.NoError(t, err)
	}
	dials := c.Stats().Nodes[0].Pool.Dials
	assert.LessOrEqual(t, dials, int64(2), "one connection, reused, not one per command")
}
