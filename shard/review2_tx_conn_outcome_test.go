package shard_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// TestReview2ConnPinnedWriteWithoutReplyIsUnknownOutcome: on the
// connection a Conn holds for a transaction, a write (EXEC, or a SET under
// WATCH) whose connection failed after it was written is an
// *UnknownOutcomeError, as the same write sent without WATCH is; a read is
// a plain *NodeError. Before, all of them were plain *NodeErrors.
func TestReview2ConnPinnedWriteWithoutReplyIsUnknownOutcome(t *testing.T) {
	c, server := oneServerRing(t, 200*time.Millisecond)
	bg := context.Background()

	t.Run("EXEC", func(t *testing.T) {
		conn := c.Conn()
		defer conn.Close()
		for _, cmd := range [][]any{{"WATCH", "r2co:n"}, {"MULTI"}, {"INCR", "r2co:n"}, {"DEBUG", "SLEEP", "0.6"}} {
			_, err := conn.Do(cmd[0].(string), cmd[1:]...)
			require.NoError(t, err, "%v", cmd)
		}
		_, err := conn.Do("EXEC")
		var uo *shard.UnknownOutcomeError
		require.True(t, errors.As(err, &uo), "an *UnknownOutcomeError: %v", err)
		require.Equal(t, "EXEC", uo.Command)
		var ne *shard.NodeError
		require.True(t, errors.As(err, &ne), "a *NodeError: %v", err)
		waitFor(t, 10*time.Second, "the INCR to be visible", func() bool {
			n, err := redis.Int(c.Do(bg, "GET", "r2co:n"))
			return err == nil && n == 1
		})
	})

	for _, tc := range []struct {
		cmd         []any
		wantUnknown bool
	}{
		{[]any{"SET", "r2co:w", "v"}, true},
		{[]any{"GET", "r2co:w"}, false},
	} {
		t.Run(tc.cmd[0].(string)+" under WATCH", func(t *testing.T) {
			conn := c.Conn()
			defer conn.Close()
			_, err := conn.Do("WATCH", "r2co:w")
			require.NoError(t, err)
			require.NoError(t, server.Pause())
			_, err = conn.Do(tc.cmd[0].(string), tc.cmd[1:]...)
			require.NoError(t, server.Resume())
			var ne *shard.NodeError
			require.True(t, errors.As(err, &ne), "a *NodeError: %v", err)
			var uo *shard.UnknownOutcomeError
			require.Equal(t, tc.wantUnknown, errors.As(err, &uo), "an *UnknownOutcomeError: %v", err)
			if tc.wantUnknown {
				require.Equal(t, "SET", uo.Command)
			}
		})
	}
}

// TestReview2ConnContextEndsWhileExecWaits: the context ends after a
// Conn's EXEC was written (the server holds it: CLIENT PAUSE WRITE): the
// error wraps context.Canceled and says the transaction may have run.
func TestReview2ConnContextEndsWhileExecWaits(t *testing.T) {
	c, server := oneServerRing(t, 5*time.Second)
	bg := context.Background()
	conn := c.Conn().(redis.ConnWithContext)
	defer conn.Close()
	for _, cmd := range [][]any{{"WATCH", "r2co:c"}, {"MULTI"}, {"INCR", "r2co:c"}} {
		_, err := conn.DoContext(bg, cmd[0].(string), cmd[1:]...)
		require.NoError(t, err, "%v", cmd)
	}
	ctx, watched := cancelOnceExecHeld(t, server)
	_, err := conn.DoContext(ctx, "EXEC")
	require.NoError(t, <-watched)
	require.ErrorIs(t, err, context.Canceled)
	require.Contains(t, err.Error(), "may have run")
}
