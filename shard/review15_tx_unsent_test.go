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

// A tx.Do write that the transaction's connection cannot carry any more
// (the server closed it after refusing an earlier command with a protocol
// error) is not written and does not run. It still counted as a write of
// the function's: the cluster transaction, which runs again when its node
// could not be reached before anything was sent, failed with
// ErrTxNotRetried ("its function wrote through Tx.Do") although nothing
// was written. Now the write that was never sent does not count: the
// transaction ends with the function's error, not ErrTxNotRetried. (It
// is not run again either: the protocol error is the server's verdict on
// the function's own arguments, which every attempt would send again.)
func TestReview15TxWriteOnClosedConnIsNotAWrite(t *testing.T) {
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{Args: []string{"--proto-max-bulk-len", "1mb"}})
	cfg := shard.Config{Mode: shard.ModeCluster, Seeds: rc.Seeds()}
	cfg.Pool = pool.Options{DialTimeout: 3 * time.Second, ReadTimeout: 5 * time.Second, WriteTimeout: 5 * time.Second}
	// No health checks: the resets of the rounds whose big argument's
	// write the server cut short would mark the node down.
	cfg.Health.Interval = -1
	cfg.Cluster.MaxRetryWait = 20 * time.Second
	c := newClient(t, cfg)
	ctx := context.Background()
	big := "{r15tx}" + strings.Repeat("x", 1<<20+1) // a key over proto-max-bulk-len

	// On a loaded machine the server often resets the connection while
	// the big key is still being written rather than answering it with
	// its protocol error: rounds until the error came back as a reply.
	replied := 0
	for round := 0; round < 400 && replied < 2; round++ {
		attempt := 0
		gotReply := false
		var setErr error
		reply, err := c.Tx(ctx, []string{"{r15tx}k"}, func(tx *shard.Tx) error {
			attempt++
			if attempt == 1 {
				_, gerr := tx.Do("GET", big)
				if gerr == nil || !isProtocolErrorReply(gerr) {
					return errors.New("no protocol error reply")
				}
				gotReply = true
				// The connection is closed: this write is not sent.
				_, setErr = tx.Do("SET", "{r15tx}w", "1")
				return setErr
			}
			if _, err := tx.Do("SET", "{r15tx}w", "2"); err != nil {
				return err
			}
			return tx.Queue("INCR", "{r15tx}k")
		})
		if !gotReply {
			continue
		}
		replied++
		var ne *shard.NodeError
		require.True(t, errors.As(setErr, &ne), "the unsent SET's error: %v", setErr)
		require.False(t, errors.Is(err, shard.ErrTxNotRetried), "nothing was written, yet: %v", err)
		require.ErrorIs(t, err, setErr, "the function's error")
		require.Nil(t, reply)
		require.Equal(t, 1, attempt)
	}
	require.NotZero(t, replied, "the protocol error never came back as a reply in 400 rounds")
}

// A tx.Do write over the server's proto-max-bulk-len is refused before it
// runs: the server answers it with a protocol error, or resets the
// connection while it is still being written, and in both cases never
// read it whole. It still counted as a write of the function's: a
// function that went on without it (a best-effort write) got its cluster
// transaction, which then failed on the closed connection before
// anything of MULTI ... EXEC was sent and would run again, ended with
// ErrTxNotRetried. Now the refused write does not count. When the
// connection was reset with no refusal read, the transaction runs again
// (nothing of it ran), and runs; when the server's protocol error was
// read, the transaction ends at once with an error that wraps it (every
// attempt of a function that sends the value would meet it again).
func TestReview15TxWriteRefusedUnreadIsNotAWrite(t *testing.T) {
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{Args: []string{"--proto-max-bulk-len", "1mb"}})
	cfg := shard.Config{Mode: shard.ModeCluster, Seeds: rc.Seeds()}
	cfg.Pool = pool.Options{DialTimeout: 3 * time.Second, ReadTimeout: 5 * time.Second, WriteTimeout: 5 * time.Second}
	cfg.Health.Interval = -1 // the resets would mark the node down
	cfg.Cluster.MaxRetryWait = 20 * time.Second
	c := newClient(t, cfg)
	ctx := context.Background()
	big := strings.Repeat("x", 1<<20+1)

	for round := 0; round < 5; round++ {
		attempt := 0
		var bigErr error
		reply, err := c.Tx(ctx, []string{"{r15tx2}k"}, func(tx *shard.Tx) error {
			attempt++
			if attempt == 1 {
				// Best effort: the function goes on without it.
				_, bigErr = tx.Do("SET", "{r15tx2}big", big)
			}
			return tx.Queue("INCR", "{r15tx2}k")
		})
		require.Error(t, bigErr, "round %d", round)
		require.False(t, errors.Is(err, shard.ErrTxNotRetried), "round %d: nothing was written, yet: %v (the big SET: %v)", round, err, bigErr)
		if isProtocolErrorReply(bigErr) {
			require.True(t, isProtocolErrorReply(err), "round %d: %v, want the server's refusal of the big SET", round, err)
			require.Nil(t, reply)
			require.Equal(t, 1, attempt)
		} else {
			require.NoError(t, err, "round %d (the big SET: %v)", round, bigErr)
			require.Len(t, reply, 1)
			require.Equal(t, 2, attempt)
		}
		n, err := redis.Int(c.Do(ctx, "EXISTS", "{r15tx2}big"))
		require.NoError(t, err)
		require.Zero(t, n, "the refused SET ran")
	}
}
