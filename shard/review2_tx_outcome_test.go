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

// TestReview2TxExecWithoutReplyIsUnknownOutcome: EXEC written, then no
// reply within the read timeout: the transaction may have run (here it
// did), so the error is an *UnknownOutcomeError for EXEC, as for any
// write whose connection failed after sending, and still a *NodeError.
func TestReview2TxExecWithoutReplyIsUnknownOutcome(t *testing.T) {
	c, server := oneServerRing(t, 200*time.Millisecond)
	bg := context.Background()
	_, err := c.Tx(bg, []string{"r2tx:uo"}, func(tx *shard.Tx) error {
		if err := tx.Queue("INCR", "r2tx:uo"); err != nil {
			return err
		}
		return tx.Queue("DEBUG", "SLEEP", "0.6") // holds EXEC's reply past the read timeout
	})
	require.Error(t, err)
	var ne *shard.NodeError
	require.True(t, errors.As(err, &ne), "a *NodeError: %v", err)
	var uo *shard.UnknownOutcomeError
	require.True(t, errors.As(err, &uo), "an *UnknownOutcomeError: %v", err)
	require.Equal(t, "EXEC", uo.Command)
	require.Equal(t, server.Addr, uo.Node.Addr)
	// It did run.
	waitFor(t, 10*time.Second, "the INCR to be visible", func() bool {
		n, err := redis.Int(c.Do(bg, "GET", "r2tx:uo"))
		return err == nil && n == 1
	})
}

// TestReview2TxContextEndsWhileExecWaits: the context ends after EXEC was
// written (the server holds it: CLIENT PAUSE WRITE): the error wraps
// context.Canceled and says the transaction may have run.
func TestReview2TxContextEndsWhileExecWaits(t *testing.T) {
	c, server := oneServerRing(t, 5*time.Second)
	// Canceled once the server holds the transaction's EXEC.
	ctx, watched := cancelOnceExecHeld(t, server)
	_, err := c.Tx(ctx, []string{"r2tx:cw"}, func(tx *shard.Tx) error {
		return tx.Queue("INCR", "r2tx:cw")
	})
	require.NoError(t, <-watched)
	require.ErrorIs(t, err, context.Canceled)
	require.Contains(t, err.Error(), "may have run")
}
