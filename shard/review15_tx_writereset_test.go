package shard_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// TestTxWriteResetBeforeItsEndRunsFnAgainOnce: fn's first write through
// tx.Do fails while it is being written (the node has closed the
// connection: the client's write of a large LPUSH is reset part way),
// and fn ignores the error. The node never read the LPUSH whole, so it
// did not run: the transaction may run fn again, and the LPUSH is
// applied once, by the second run.
func TestTxWriteResetBeforeItsEndRunsFnAgainOnce(t *testing.T) {
	ctx := context.Background()
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	const user = "r15txw"
	for _, s := range rc.Nodes {
		_, err := s.Do("ACL", "SETUSER", user, "on", ">r15txwpw", "~*", "&*", "+@all")
		require.NoError(t, err)
	}
	cfg := clusterConfig(rc.Seeds()...)
	cfg.Pool.Username, cfg.Pool.Password = user, "r15txwpw"
	cfg.Pool.WriteTimeout = 10 * time.Second // the reset, not a timeout, ends the write
	c := newClient(t, cfg)
	const w, dst = "{r15txw}w", "{r15txw}dst"
	big := strings.Repeat("x", 32<<20) // well over a loopback socket's buffers

	var runs atomic.Int32
	var firstErr, killErr error
	_, err := c.Tx(ctx, []string{w}, func(tx *shard.Tx) error {
		if runs.Add(1) == 1 {
			// Every node closes the client's connections, this one
			// included, before fn writes.
			for _, s := range rc.Nodes {
				if _, err := s.Do("CLIENT", "KILL", "USER", user); err != nil {
					killErr = err
				}
			}
			_, firstErr = tx.Do("LPUSH", dst, big) // ignored
			return tx.Queue("GET", w)
		}
		if _, err := tx.Do("LPUSH", dst, "second"); err != nil {
			return err
		}
		return tx.Queue("GET", w)
	})
	require.NoError(t, killErr)
	require.Error(t, firstErr, "the LPUSH on the killed connection")
	var uo *shard.UnknownOutcomeError
	if errors.As(firstErr, &uo) {
		// The write went out whole before the reset came: its outcome
		// is unknown, and fn must not run again.
		require.Equal(t, int32(1), runs.Load())
		require.ErrorIs(t, err, shard.ErrTxNotRetried)
		return
	}
	require.NoError(t, err, "the LPUSH never ran (%v): the transaction runs fn again", firstErr)
	require.Equal(t, int32(2), runs.Load())
	n, err := redis.Int(c.Do(ctx, "LLEN", dst))
	require.NoError(t, err)
	require.Equal(t, 1, n, "LPUSH applied once, by fn's second run")
	v, err := redis.String(c.Do(ctx, "LINDEX", dst, 0))
	require.NoError(t, err)
	require.Equal(t, "second", v)
}

// TestTxWriteReplyLostAfterItRanNotRunAgain: fn's first write through
// tx.Do runs on the node, and its reply is lost with the connection (the
// node closes it for a reply over its output buffer limit); fn ignores
// the error. The write may have run (here it did), so the transaction
// must not run fn again: RPOPLPUSH moves one element, not two.
func TestTxWriteReplyLostAfterItRanNotRunAgain(t *testing.T) {
	ctx := context.Background()
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	c := newClient(t, clusterConfig(rc.Seeds()...))
	const w, src, dst = "{r15txl}w", "{r15txl}src", "{r15txl}dst"
	big := strings.Repeat("y", 256<<10)
	_, err := c.Do(ctx, "RPUSH", src, big, big, big)
	require.NoError(t, err)
	for _, s := range rc.Nodes {
		_, err := s.Do("CONFIG", "SET", "client-output-buffer-limit", "normal 64kb 0 0")
		require.NoError(t, err)
	}
	t.Cleanup(func() {
		for _, s := range rc.Nodes {
			_, _ = s.Do("CONFIG", "SET", "client-output-buffer-limit", "normal 0 0 0")
		}
	})

	var runs atomic.Int32
	var firstErr error
	_, err = c.Tx(ctx, []string{w}, func(tx *shard.Tx) error {
		runs.Add(1)
		_, firstErr = tx.Do("RPOPLPUSH", src, dst) // ignored
		return tx.Queue("GET", w)
	})
	require.Error(t, firstErr, "RPOPLPUSH with a reply over the output buffer limit")
	require.Error(t, err)
	require.Equal(t, int32(1), runs.Load(), "fn ran again after a write that ran: %v", err)
	for _, s := range rc.Nodes {
		_, err := s.Do("CONFIG", "SET", "client-output-buffer-limit", "normal 0 0 0")
		require.NoError(t, err)
	}
	n, err := redis.Int(c.Do(ctx, "LLEN", dst))
	require.NoError(t, err)
	require.Equal(t, 1, n, "RPOPLPUSH applied once")
	n, err = redis.Int(c.Do(ctx, "LLEN", src))
	require.NoError(t, err)
	require.Equal(t, 2, n)
}
