package shard_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview21ErrorCauseTable: ErrorCause maps each kind of error the
// client returns, wrapped as the client wraps it, to one cause of a
// fixed set; a reply's code only when Redis defines it, never the text
// of a made-up one.
func TestReview21ErrorCauseTable(t *testing.T) {
	node := shard.Node{Name: "n", Addr: "127.0.0.1:1"}
	onNode := func(err error) error { return &shard.NodeError{Node: node, Err: err} }
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", errors.New("connection refused"))}
	readTimeout := &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"nil", nil, ""},
		{"tx aborted", shard.ErrTxAborted, "tx_aborted"},
		{"tx aborted wrapped", fmt.Errorf("exec: %w", shard.ErrTxAborted), "tx_aborted"},
		{"closed", shard.ErrClosed, "closed"},
		{"node down", onNode(shard.ErrNodeDown), "node_down"},
		{"node down keeping its dial cause", onNode(fmt.Errorf("%w: %w", shard.ErrNodeDown, &pool.DialError{Addr: node.Addr, Err: refused})), "node_down"},
		{"auth", onNode(&pool.AuthError{Addr: node.Addr, Username: "app", Err: redis.Error("WRONGPASS invalid username-password pair")}), "auth"},
		{"auth without a password set", onNode(&pool.AuthError{Addr: node.Addr, Username: "default", Err: redis.Error("ERR AUTH called without any password configured")}), "auth"},
		{"dial refused", onNode(&pool.DialError{Addr: node.Addr, Err: refused}), "dial"},
		{"dial maxclients", onNode(&pool.DialError{Addr: node.Addr, Err: redis.Error("ERR max number of clients reached")}), "dial"},
		{"dial deadline", onNode(&pool.DialError{Addr: node.Addr, Err: context.DeadlineExceeded}), "timeout"},
		{"dial net timeout", onNode(&pool.DialError{Addr: node.Addr, Err: &net.OpError{Op: "dial", Err: os.ErrDeadlineExceeded}}), "timeout"},
		{"dial canceled", onNode(&pool.DialError{Addr: node.Addr, Err: context.Canceled}), "canceled"},
		{"WRONGTYPE", redis.Error("WRONGTYPE Operation against a key holding the wrong kind of value"), "WRONGTYPE"},
		{"CLUSTERDOWN in a retry", &shard.RetryError{Attempts: 3, Err: redis.Error("CLUSTERDOWN The cluster is down")}, "CLUSTERDOWN"},
		{"a made-up code", redis.Error("MYCODE s3cret"), "other"},
		{"a script's text", redis.Error("user:alice is locked"), "other"},
		{"empty reply", redis.Error(""), "other"},
		{"read timeout", onNode(readTimeout), "timeout"},
		{"reset", onNode(&net.OpError{Op: "read", Net: "tcp", Err: errors.New("connection reset by peer")}), "io"},
		{"protocol", onNode(fmt.Errorf("%w: bad reply", pool.ErrProtocol)), "io"},
		{"io in a retry", &shard.RetryError{Attempts: 2, Err: onNode(errors.New("EOF"))}, "io"},
		{"context deadline", context.DeadlineExceeded, "timeout"},
		{"context canceled", fmt.Errorf("wait: %w", context.Canceled), "canceled"},
		{"anything else", errors.New("bad argument"), ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, shard.ErrorCause(tc.err))
		})
	}
}

// TestReview21ErrorCauseFromServers: the errors real servers make the
// client return classify as they should: refused credentials are "auth"
// (not the server's WRONGPASS), a node the health checks marked down
// "node_down", a command against the wrong type WRONGTYPE, a script's
// runtime error ERR and a script's own error text "other", whatever
// its first word, a shard that refuses connections "dial", a frozen
// server's reply "timeout", an aborted transaction "tx_aborted", a closed
// client "closed".
func TestReview21ErrorCauseFromServers(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 3, redistest.Options{DefaultPassword: "r21-right-pw"})

	noHealth := func(s *redistest.Server, pw string) *shard.Client {
		cfg := ringConfig([]*redistest.Server{s})
		cfg.Health.Interval = -1
		cfg.Pool.Password = pw
		cfg.Pool.ReadTimeout = 300 * time.Millisecond
		return newClient(t, cfg)
	}

	t.Run("auth", func(t *testing.T) {
		c := noHealth(servers[0], "r21-wrong-pw")
		_, err := c.Do(ctx, "GET", "r21ec:k")
		require.ErrorIs(t, err, pool.ErrAuth)
		assert.Equal(t, "auth", shard.ErrorCause(err), "%v", err)
	})

	c := noHealth(servers[0], "r21-right-pw")
	t.Run("server replies", func(t *testing.T) {
		_, err := c.Do(ctx, "SET", "r21ec:s", "v")
		require.NoError(t, err)
		_, err = c.Do(ctx, "LPUSH", "r21ec:s", "x")
		require.ErrorContains(t, err, "WRONGTYPE")
		assert.Equal(t, "WRONGTYPE", shard.ErrorCause(err))
		_, err = c.Do(ctx, "INCR", "r21ec:s")
		require.ErrorContains(t, err, "ERR")
		assert.Equal(t, "ERR", shard.ErrorCause(err))
		_, err = c.Do(ctx, "EVAL", "error('boom S3cret')", 1, "r21ec:e")
		require.ErrorContains(t, err, "S3cret")
		assert.Equal(t, "ERR", shard.ErrorCause(err), "a runtime error: the server's ERR")
		for _, script := range []string{
			"return redis.error_reply('MYCODE S3cret')",
			"return redis.error_reply('LOADING not really')",
			"return {err='user:alice is locked'}",
		} {
			_, err = c.Do(ctx, "EVAL", script, 1, "r21ec:e")
			require.Error(t, err, script)
			got := shard.ErrorCause(err)
			if script == "return redis.error_reply('LOADING not really')" {
				// A script may reply with a code Redis defines: it is
				// one of the bounded set all the same.
				assert.Equal(t, "LOADING", got)
				continue
			}
			assert.Equal(t, "other", got, "%s: %v", script, err)
		}
	})

	t.Run("tx aborted", func(t *testing.T) {
		_, err := c.Tx(ctx, []string{"r21ec:w"}, func(tx *shard.Tx) error {
			if _, err := servers[0].Do("SET", "r21ec:w", "changed"); err != nil {
				return err
			}
			return tx.Queue("SET", "r21ec:w", "2")
		})
		require.ErrorIs(t, err, shard.ErrTxAborted)
		assert.Equal(t, "tx_aborted", shard.ErrorCause(err))
	})

	t.Run("timeout", func(t *testing.T) {
		_, err := c.Do(ctx, "GET", "r21ec:k")
		require.NoError(t, err)
		pauseUntilCleanup(t, servers[0])
		_, err = c.Do(ctx, "GET", "r21ec:k")
		require.Error(t, err)
		assert.Equal(t, "timeout", shard.ErrorCause(err), "%v", err)
	})

	t.Run("dial", func(t *testing.T) {
		dc := noHealth(servers[1], "r21-right-pw")
		require.NoError(t, servers[1].Kill())
		_, err := dc.Do(ctx, "GET", "r21ec:k")
		require.Error(t, err)
		assert.Equal(t, "dial", shard.ErrorCause(err), "%v", err)
	})

	t.Run("node down", func(t *testing.T) {
		cfg := ringConfig([]*redistest.Server{servers[2]})
		cfg.Pool.Password = "r21-right-pw"
		nc := newClient(t, cfg)
		_, err := nc.Do(ctx, "GET", "r21ec:k")
		require.NoError(t, err)
		require.NoError(t, servers[2].Kill())
		waitFor(t, 30*time.Second, "the node marked down", func() bool {
			_, err = nc.Do(ctx, "GET", "r21ec:k")
			return errors.Is(err, shard.ErrNodeDown)
		})
		assert.Equal(t, "node_down", shard.ErrorCause(err), "%v", err)

		require.NoError(t, nc.Close())
		_, err = nc.Do(ctx, "GET", "r21ec:k")
		require.ErrorIs(t, err, shard.ErrClosed)
		assert.Equal(t, "closed", shard.ErrorCause(err))
	})
}
