package shard_test

import (
	"context"
	"errors"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// TestReview2TxContextEndedInFnSendsNoExec: a transaction whose context
// ends while fn runs (fn returns nil) must not send MULTI ... EXEC: the
// error wraps context.Canceled and the queued write did not run. Before,
// EXEC was written with the ended context (liveConn only closes the
// connection from a goroutine of its own), so the INCR ran while the
// caller got "context canceled".
func TestReview2TxContextEndedInFnSendsNoExec(t *testing.T) {
	c, _ := startRing(t, 1)
	bg := context.Background()
	for i := range 30 {
		ctx, cancel := context.WithCancel(bg)
		_, err := c.Tx(ctx, []string{"r2tx:n"}, func(tx *shard.Tx) error {
			if err := tx.Queue("INCR", "r2tx:n"); err != nil {
				return err
			}
			cancel()
			return nil
		})
		require.ErrorIs(t, err, context.Canceled, "attempt %d", i)
		n, err := redis.Int(c.Do(bg, "GET", "r2tx:n"))
		if !errors.Is(err, redis.ErrNil) {
			require.NoError(t, err)
			t.Fatalf("attempt %d: the INCR of a transaction whose context ended before EXEC ran: r2tx:n = %d", i, n)
		}
	}
	// The connections went back whole: the next transaction runs.
	reply, err := c.Tx(bg, []string{"r2tx:n"}, func(tx *shard.Tx) error {
		return tx.Queue("INCR", "r2tx:n")
	})
	require.NoError(t, err)
	require.Equal(t, []any{int64(1)}, reply)
}
