package shard_test

import (
	"context"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// TestReview2TxRefusesCommandsThatBreakIt: tx.Do and tx.Queue refuse, with
// a *ConnStateError and before anything is sent, the commands after which
// the transaction's connection no longer answers as a transaction needs:
// subscribe mode, MONITOR, CLIENT REPLY OFF|SKIP, HELLO 3, and RESET and
// QUIT (which drop the WATCH and the MULTI). Before, they were sent: after
// MONITOR, EXEC's replies were read from the monitor's stream; after
// RESET, the queued commands ran one by one outside any transaction.
func TestReview2TxRefusesCommandsThatBreakIt(t *testing.T) {
	c, _ := startRing(t, 1)
	bg := context.Background()
	for _, tc := range []struct {
		queue bool
		cmd   []any
	}{
		{false, []any{"MONITOR"}},
		{false, []any{"SUBSCRIBE", "r2s:ch"}},
		{true, []any{"SUBSCRIBE", "r2s:ch"}},
		{false, []any{"CLIENT", "REPLY", "OFF"}},
		{true, []any{"CLIENT", "REPLY", "SKIP"}},
		{false, []any{"HELLO", "3"}},
		{false, []any{"RESET"}},
		{true, []any{"RESET"}},
		{true, []any{"QUIT"}},
	} {
		name := strings.TrimSpace(strings.Repeat("Queue ", b2i(tc.queue))) + " " + strings.ToUpper(tc.cmd[0].(string))
		t.Run(name, func(t *testing.T) {
			_, err := c.Do(bg, "DEL", "r2s:k")
			require.NoError(t, err)
			_, err = c.Tx(bg, []string{"r2s:k"}, func(tx *shard.Tx) error {
				if err := tx.Queue("INCR", "r2s:k"); err != nil {
					return err
				}
				if tc.queue {
					return tx.Queue(tc.cmd[0].(string), tc.cmd[1:]...)
				}
				_, err := tx.Do(tc.cmd[0].(string), tc.cmd[1:]...)
				return err
			})
			require.ErrorIs(t, err, shard.ErrConnState)
			var cse *shard.ConnStateError
			require.ErrorAs(t, err, &cse)
			// Nothing ran; the next transaction runs as usual.
			_, err = redis.String(c.Do(bg, "GET", "r2s:k"))
			require.ErrorIs(t, err, redis.ErrNil)
			reply, err := c.Tx(bg, []string{"r2s:k"}, func(tx *shard.Tx) error {
				return tx.Queue("INCR", "r2s:k")
			})
			require.NoError(t, err)
			require.Equal(t, []any{int64(1)}, reply)
		})
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
