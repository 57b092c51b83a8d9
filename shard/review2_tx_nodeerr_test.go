package shard_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// TestReview2TxIOFailureIsNodeError: a transaction whose node stops
// answering at WATCH, or at a read of fn, fails with a *NodeError naming
// the node (as every other call does), not with the connection's bare
// network error.
func TestReview2TxIOFailureIsNodeError(t *testing.T) {
	c, server := oneServerRing(t, 200*time.Millisecond)
	bg := context.Background()
	_, err := c.Do(bg, "SET", "r2ne:k", "v") // a pooled connection is open
	require.NoError(t, err)

	t.Run("WATCH", func(t *testing.T) {
		require.NoError(t, server.Pause())
		_, err := c.Tx(bg, []string{"r2ne:k"}, func(tx *shard.Tx) error { return nil })
		require.NoError(t, server.Resume())
		var ne *shard.NodeError
		require.True(t, errors.As(err, &ne), "a *NodeError: %v", err)
		require.Equal(t, server.Addr, ne.Node.Addr)
	})
	for _, tc := range []struct {
		cmd         []any
		wantUnknown bool // a write: its outcome is unknown
	}{
		{[]any{"GET", "r2ne:k"}, false},
		{[]any{"BLPOP", "r2ne:list", "0.1"}, true}, // a pop
		{[]any{"SET", "r2ne:k", "w"}, true},
	} {
		t.Run("tx.Do "+tc.cmd[0].(string), func(t *testing.T) {
			var doErr error
			_, err := c.Tx(bg, []string{"r2ne:k"}, func(tx *shard.Tx) error {
				if err := server.Pause(); err != nil {
					return err
				}
				_, doErr = tx.Do(tc.cmd[0].(string), tc.cmd[1:]...)
				if err := server.Resume(); err != nil {
					return err
				}
				return doErr
			})
			var ne *shard.NodeError
			require.True(t, errors.As(doErr, &ne), "tx.Do: a *NodeError: %v", doErr)
			require.Equal(t, server.Addr, ne.Node.Addr)
			require.ErrorContains(t, ne.Err, "timeout")
			require.True(t, errors.As(err, &ne), "Tx: a *NodeError: %v", err)
			var uo *shard.UnknownOutcomeError
			require.Equal(t, tc.wantUnknown, errors.As(doErr, &uo), "an *UnknownOutcomeError: %v", doErr)
		})
	}
}
