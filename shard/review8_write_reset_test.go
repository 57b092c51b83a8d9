package shard_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// oversizedClient returns a client without the automatic pipeline over
// one server that refuses values over 1 MB, and a value that its
// connection can never take whole: the server answers the protocol error
// after the first megabyte and closes the connection while the rest is
// still being written. Health checks run once an hour, so only the
// commands count the node's failures.
func oversizedClient(t *testing.T) (*shard.Client, string) {
	t.Helper()
	server := redistest.StartTB(t, redistest.Options{Args: []string{"--proto-max-bulk-len", "1mb"}})
	cfg := ringConfig([]*redistest.Server{server})
	cfg.DisableAutoPipeline = true
	cfg.Health.Interval = time.Hour
	return newClient(t, cfg), strings.Repeat("x", 32<<20)
}

// requireNotWritten checks that err is the failure of a command that was
// not completely written: a *NodeError, not of unknown outcome.
func requireNotWritten(t *testing.T, err error, what string) {
	t.Helper()
	require.Error(t, err, what)
	var uo *shard.UnknownOutcomeError
	require.False(t, errors.As(err, &uo), "%s: a command not completely written did not run, got %v", what, err)
	var ne *shard.NodeError
	require.True(t, errors.As(err, &ne), "%s: %v", what, err)
	require.Contains(t, err.Error(), "not run", what)
}

// TestReview8WriteResetOfAnOversizedValueIsNoNodeFailure: a SET whose value
// the server refuses part way (it closes the connection while the value
// is being written) came back of unknown outcome, although the server
// never read it whole, and counted as a failure of the node: a few of
// them marked a healthy node down, and every key of its shard failed.
func TestReview8WriteResetOfAnOversizedValueIsNoNodeFailure(t *testing.T) {
	c, big := oversizedClient(t)
	ctx := context.Background()

	for i := 0; i < 5; i++ {
		_, err := c.Do(ctx, "SET", "review8:wr:big", big)
		requireRefusedOrNotWritten(t, err, "oversized SET")
	}
	require.False(t, c.Stats().Nodes[0].Down, "a node that answers was marked down by write resets")

	n, err := redis.Int(c.Do(ctx, "INCR", "review8:wr:n"))
	require.NoError(t, err, "a command after the oversized SETs")
	require.Equal(t, 1, n)
	exists, err := redis.Int(c.Do(ctx, "EXISTS", "review8:wr:big"))
	require.NoError(t, err)
	require.Zero(t, exists)
}

// TestReview8WriteResetInAPipeline: in a pipeline, the oversized SET and
// the command queued after it (never written) are not run; a command
// written whole before the reset gets the reply the server sent before
// it (read after the failed write), or else keeps its unknown outcome.
func TestReview8WriteResetInAPipeline(t *testing.T) {
	c, big := oversizedClient(t)
	ctx := context.Background()

	requireOversizedSetStopsThePipeline(t, c, big, "review8:wp:big", "review8:wp:after", "oversized SET")

	p := c.Pipeline()
	p.Send("INCR", "review8:wp:before")
	p.Send("SET", "review8:wp:big", big)
	res, err := p.Exec(ctx)
	require.NoError(t, err)
	var uo *shard.UnknownOutcomeError
	if res[0].Err == nil {
		require.Equal(t, int64(1), res[0].Reply, "an INCR written whole before the reset")
		n, err := redis.Int(c.Do(ctx, "GET", "review8:wp:before"))
		require.NoError(t, err)
		require.Equal(t, 1, n, "the INCR whose reply was read did not run")
	} else {
		require.True(t, errors.As(res[0].Err, &uo), "an INCR written whole before the reset: %v", res[0].Err)
	}
	requireRefusedOrNotWritten(t, res[1].Err, "oversized SET after it")
	require.False(t, c.Stats().Nodes[0].Down)
}

// requireOversizedSetStopsThePipeline sends a pipeline of SET bigKey big,
// bigger than the server accepts (what names it), and INCR afterKey:
// neither may be written, and the INCR must not have run.
func requireOversizedSetStopsThePipeline(t *testing.T, c *shard.Client, big, bigKey, afterKey, what string) {
	t.Helper()
	ctx := context.Background()
	p := c.Pipeline()
	p.Send("SET", bigKey, big)
	p.Send("INCR", afterKey)
	res, err := p.Exec(ctx)
	require.NoError(t, err)
	requireRefusedOrNotWritten(t, res[0].Err, what)
	requireNotWritten(t, res[1].Err, "INCR queued after it")
	after, err := c.Do(ctx, "GET", afterKey)
	require.NoError(t, err)
	require.Nil(t, after, "the INCR after the oversized SET ran")
}
