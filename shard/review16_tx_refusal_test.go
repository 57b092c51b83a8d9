package shard_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// Redis answers MOVED for any command whose key is in a slot the node
// does not serve before it runs the command, a script's EVAL included (a
// script's own call that reaches a key elsewhere gets an ERR). An EVAL
// that writes, sent through tx.Do and redirected because the slot moved
// while fn ran, still counted as a write of fn's: the transaction ended
// with ErrTxNotRetried instead of running again at the slot's new owner.
func TestReview16TxScriptMovedIsNotAWrite(t *testing.T) {
	c, a, b, key, slot, tag := startSlotMoveTx(t, "r16eval")
	ctx := context.Background()

	attempt := 0
	var firstErr error
	reply, err := c.Tx(ctx, []string{key}, func(tx *shard.Tx) error {
		attempt++
		if attempt == 1 {
			// The slot moves to b while fn runs: the EVAL meets MOVED.
			assignSlot(t, slot, a, b)
		}
		_, err := tx.Do("EVAL", "redis.call('SET', KEYS[1], 'v') return 1", 1, tag+"script")
		if attempt == 1 {
			firstErr = err
		}
		if err != nil {
			return err
		}
		return tx.Queue("INCR", key)
	})
	var re redis.Error
	require.True(t, errors.As(firstErr, &re) && strings.HasPrefix(string(re), "MOVED "), "the first EVAL: %v", firstErr)
	require.False(t, errors.Is(err, shard.ErrTxNotRetried), "the EVAL did not run: %v", err)
	require.NoError(t, err)
	require.Equal(t, []any{int64(1)}, reply)
	require.Equal(t, 2, attempt)
	v, err := redis.String(c.Do(ctx, "GET", tag+"script"))
	require.NoError(t, err)
	require.Equal(t, "v", v)
}
