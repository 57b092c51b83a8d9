package shard_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview10SentinelTxRetriedWithinFailoverWait: with FailoverWait, a
// transaction that certainly did not run because its shard's master was
// failing over waits for the new master and runs again, fn included, as a
// command does: here the master was demoted behind the Sentinels' backs
// (the queued SET met READONLY, so EXEC was refused and ran nothing), and
// then killed during a Sentinel failover (the connection was refused
// before anything was sent). Before, transactions were never retried:
// both failed at once.
func TestReview10SentinelTxRetriedWithinFailoverWait(t *testing.T) {
	const key = "review10:tx"
	tx := func(ctx context.Context, c *shard.Client, v string, runs *int) error {
		_, err := c.Tx(ctx, []string{key}, func(tx *shard.Tx) error {
			*runs++
			if _, err := tx.Do("GET", key); err != nil {
				return err
			}
			return tx.Queue("SET", key, v)
		})
		return err
	}

	t.Run("demoted master", func(t *testing.T) {
		o := sentinelSetOptions(1)
		o.Sentinels = 1
		set := redistest.StartSentinelsTB(t, o)
		cfg := sentinelConfig(set)
		cfg.Sentinel.RefreshInterval = -1
		cfg.Sentinel.FailoverWait = 20 * time.Second
		c := newClient(t, cfg)
		ctx := context.Background()
		runs := 0
		require.NoError(t, tx(ctx, c, "1", &runs))

		require.NoError(t, set.Sentinels[0].Kill()) // only the demoted master's ROLE tells
		old, next := shardServers(t, set, 0)
		swapRoles(t, old, next)

		runs = 0
		require.NoError(t, tx(ctx, c, "2", &runs), "the transaction was not run again at the new master")
		assert.GreaterOrEqual(t, runs, 2, "fn runs again with each attempt")
		got, err := next.Do("GET", key)
		require.NoError(t, err)
		assert.Equal(t, "2", got)
		assert.Equal(t, next.Addr, c.Stats().Sentinel[0].Master)
	})

	t.Run("killed master", func(t *testing.T) {
		o := sentinelSetOptions(1)
		o.Sentinels = 1
		set := redistest.StartSentinelsTB(t, o)
		cfg := sentinelConfig(set)
		cfg.Sentinel.FailoverWait = 60 * time.Second
		c := newClient(t, cfg)
		ctx := context.Background()
		runs := 0
		require.NoError(t, tx(ctx, c, "1", &runs))
		old, next := shardServers(t, set, 0)
		require.NoError(t, old.Kill())
		// The client's pooled connections fail first; then the dials are
		// refused until the Sentinel promotes the replica.
		require.NoError(t, tx(ctx, c, "2", &runs), "the transaction did not wait for the new master")
		got, err := next.Do("GET", key)
		require.NoError(t, err)
		assert.Equal(t, "2", got)
	})
}

// TestReview10SentinelTxWithAWriteInFnIsNotRetried: a transaction is run
// again only when nothing of it can have run. A write that fn sent with
// tx.Do ran at once: a transaction whose EXEC then failed is not run
// again (fn would write again), even with FailoverWait; the error is the
// master's refusal, and the counter fn incremented moved once.
func TestReview10SentinelTxWithAWriteInFnIsNotRetried(t *testing.T) {
	o := sentinelSetOptions(1)
	o.Sentinels = 1
	set := redistest.StartSentinelsTB(t, o)
	cfg := sentinelConfig(set)
	cfg.Sentinel.RefreshInterval = -1
	cfg.Sentinel.FailoverWait = 20 * time.Second
	c := newClient(t, cfg)
	ctx := context.Background()
	require.NoError(t, set.Sentinels[0].Kill())
	old, next := shardServers(t, set, 0)

	const key = "review10:txw"
	runs := 0
	_, err := c.Tx(ctx, []string{key}, func(tx *shard.Tx) error {
		runs++
		if _, err := tx.Do("INCR", key+":n"); err != nil {
			return err
		}
		if runs == 1 {
			// The replica has the increment before it is promoted.
			if n, err := redis.Int(tx.Do("WAIT", 1, 10000)); err != nil || n != 1 {
				return fmt.Errorf("WAIT: %d, %w", n, err)
			}
			swapRoles(t, old, next) // demoted between fn's write and EXEC
		}
		return tx.Queue("SET", key, "v")
	})
	require.Error(t, err)
	var re redis.Error
	require.True(t, errors.As(err, &re), "%v", err)
	assert.Equal(t, 1, runs, "a transaction whose fn wrote was run again")
	assert.False(t, errors.Is(err, shard.ErrRetryBudget), "%v", err)
	assert.True(t, errors.Is(err, shard.ErrTxNotRetried), "%v", err)
	got, err := next.Do("GET", key+":n")
	require.NoError(t, err)
	assert.Equal(t, "1", got)
}
