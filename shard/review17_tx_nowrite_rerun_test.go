package shard_test

import (
	"context"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// TestReview17ClusterTxWithACommandThatWritesNothingIsRetried: a command
// fn sends through tx.Do that changes no data (CLIENT ID, PING, ECHO,
// TIME) is no write of fn's, though it is not flagged read-only: when the
// slot moves after WATCH, the transaction runs again at the new owner
// instead of failing with ErrTxNotRetried, and its queued INCR runs once.
func TestReview17ClusterTxWithACommandThatWritesNothingIsRetried(t *testing.T) {
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	ctx := context.Background()
	m := rc.Masters()
	require.Len(t, m, 3)
	cases := []struct {
		name string
		args []any
	}{
		{"CLIENT", []any{"ID"}},
		{"PING", nil},
		{"ECHO", []any{"x"}},
		{"TIME", nil},
	}
	from, to := m[0], m[1]
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			key, slot := keyOnMaster(t, rc, from, "r17txnw"+tc.name)
			c := newClient(t, txClusterConfig(rc, 5*time.Second))
			learnSlotOwner(ctx, t, c, key)
			runs := 0
			_, err := c.Tx(ctx, []string{key}, func(tx *shard.Tx) error {
				runs++
				if _, err := tx.Do(tc.name, tc.args...); err != nil {
					return err
				}
				if runs == 1 {
					moveSlot(t, slot, from, to, m) // after WATCH, before MULTI ... EXEC
				}
				return tx.Queue("INCR", key)
			})
			require.NoError(t, err, "%s through tx.Do kept the transaction from running again", tc.name)
			assert.Equal(t, 2, runs)
			got, err := redis.String(direct(t, to.Addr).Do("GET", key))
			require.NoError(t, err)
			assert.Equal(t, "1", got)
			from, to = to, from // the next case's key is on the new owner's side
		})
	}
	// A script may write: EVAL stays a write of fn's, and the
	// transaction is not run again.
	t.Run("EVAL", func(t *testing.T) {
		key, slot := keyOnMaster(t, rc, from, "r17txnwEVAL")
		c := newClient(t, txClusterConfig(rc, 5*time.Second))
		learnSlotOwner(ctx, t, c, key)
		runs := 0
		_, err := c.Tx(ctx, []string{key}, func(tx *shard.Tx) error {
			runs++
			if _, err := tx.Do("EVAL", "return redis.call('INCR', KEYS[1])", 1, key+":n"); err != nil {
				return err
			}
			if runs == 1 {
				moveSlot(t, slot, from, to, m)
			}
			return tx.Queue("INCR", key)
		})
		require.ErrorIs(t, err, shard.ErrTxNotRetried)
		assert.Equal(t, 1, runs)
	})
}
