package shard_test

import (
	"context"
	"errors"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/require"
)

// TestReview2ConnEndedContextSendsNoExec: on a Conn holding a transaction,
// DoContext with a context that has already ended writes nothing: EXEC
// fails with the context's error and the queued INCR never runs. Before,
// EXEC was written and the connection closed only after, so the
// transaction ran while the caller was told "context canceled".
func TestReview2ConnEndedContextSendsNoExec(t *testing.T) {
	c, _ := startRing(t, 1)
	bg := context.Background()
	for i := range 20 {
		conn := c.Conn().(redis.ConnWithContext)
		for _, cmd := range [][]any{{"WATCH", "r2c:n"}, {"MULTI"}, {"INCR", "r2c:n"}} {
			_, err := conn.DoContext(bg, cmd[0].(string), cmd[1:]...)
			require.NoError(t, err, "attempt %d: %v", i, cmd)
		}
		ctx, cancel := context.WithCancel(bg)
		cancel()
		_, err := conn.DoContext(ctx, "EXEC")
		require.ErrorIs(t, err, context.Canceled, "attempt %d", i)
		require.NoError(t, conn.Close())
		n, err := redis.Int(c.Do(bg, "GET", "r2c:n"))
		if !errors.Is(err, redis.ErrNil) {
			require.NoError(t, err)
			t.Fatalf("attempt %d: EXEC under an ended context ran the transaction: r2c:n = %d", i, n)
		}
	}
	// The Conn and the pool work on.
	conn := c.Conn()
	defer conn.Close()
	for _, cmd := range [][]any{{"WATCH", "r2c:n"}, {"MULTI"}, {"INCR", "r2c:n"}} {
		_, err := conn.Do(cmd[0].(string), cmd[1:]...)
		require.NoError(t, err)
	}
	reply, err := redis.Values(conn.Do("EXEC"))
	require.NoError(t, err)
	require.Equal(t, []any{int64(1)}, reply)
}
