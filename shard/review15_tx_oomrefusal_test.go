package shard_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// Redis refuses a write over maxmemory (OOM) before it runs it, as it
// does a write on a replica (READONLY): the command changed nothing. A
// tx.Do write refused so still counted as a write of the function's: a
// function that went on without it (a best-effort cache fill) got its
// cluster transaction, redirected because its slot moved meanwhile,
// ended with ErrTxNotRetried instead of run again at the slot's new
// owner.
func TestReview15TxWriteRefusedOOMIsNotAWrite(t *testing.T) {
	c, a, b, key, slot, tag := startSlotMoveTx(t, "r15oom")
	ctx := context.Background()
	_, err := a.Do("CONFIG", "SET", "maxmemory", "1")
	require.NoError(t, err)

	attempt := 0
	var cacheErr error
	reply, err := c.Tx(ctx, []string{key}, func(tx *shard.Tx) error {
		attempt++
		if attempt == 1 {
			// Best effort: the function goes on without it.
			_, cacheErr = tx.Do("SET", tag+"cache", "v")
			// The slot moves to b before MULTI ... EXEC: its queued
			// INCR meets MOVED.
			assignSlot(t, slot, a, b)
		}
		return tx.Queue("INCR", key)
	})
	var re redis.Error
	require.True(t, errors.As(cacheErr, &re) && strings.HasPrefix(string(re), "OOM "), "the cache SET: %v", cacheErr)
	require.False(t, errors.Is(err, shard.ErrTxNotRetried), "nothing was written, yet: %v", err)
	require.NoError(t, err)
	require.Equal(t, []any{int64(1)}, reply)
	require.Equal(t, 2, attempt)
	n, err := redis.Int(c.Do(ctx, "EXISTS", tag+"cache"))
	require.NoError(t, err)
	require.Zero(t, n)
}

// startSlotMoveTx starts a cluster of three masters and a client of it
// for a transaction whose key's slot a test moves while the transaction's
// function runs: key (of prefix's) is in slot, served by master a; b is
// another master; tag is key's hash tag, "{...}", for the function's
// other keys in the same slot.
func startSlotMoveTx(t *testing.T, prefix string) (c *shard.Client, a, b *redistest.Server, key string, slot int, tag string) {
	t.Helper()
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	cfg := shard.Config{Mode: shard.ModeCluster, Seeds: rc.Seeds()}
	cfg.Pool = pool.Options{DialTimeout: 3 * time.Second, ReadTimeout: 5 * time.Second, WriteTimeout: 5 * time.Second}
	cfg.Health.Interval = -1
	cfg.Cluster.MaxRetryWait = 20 * time.Second
	c = newClient(t, cfg)
	a, b = rc.Masters()[0], rc.Masters()[1]
	key, slot = keyOnMaster(t, rc, a, prefix)
	tag = key[:strings.Index(key, "}")+1]
	return c, a, b, key, slot, tag
}
