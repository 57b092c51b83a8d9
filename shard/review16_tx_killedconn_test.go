package shard_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// A transaction's connection that the server closed before MULTI was
// sent (CLIENT KILL by an operator, a client timeout, a proxy) ran
// nothing of MULTI ... EXEC and nothing of fn's but reads: the
// transaction is run again, fn included, on a fresh connection, instead
// of failing with an unknown outcome for EXEC.
func TestReview16TxConnKilledBeforeMultiIsRunAgain(t *testing.T) {
	cases := []struct {
		name, key string
		// killFirst: the server closes the connection before fn's read,
		// which finds it closed (and so did nothing): fn gives up with
		// its error, ending an attempt of which only reads ran. Else
		// after fn's read, before MULTI.
		killFirst bool
	}{
		{"after read", "r16kill", false},
		{"read on killed conn", "r16read", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			server := redistest.StartTB(t, redistest.Options{})
			c := newClient(t, faultConfig(server.Addr, 5*time.Second))
			ctx := context.Background()
			_, err := c.Do(ctx, "SET", tc.key, "1")
			require.NoError(t, err)

			// Every client connection but the killer's: the
			// transaction's among them.
			kill := func() error {
				_, err := server.Do("CLIENT", "KILL", "TYPE", "normal")
				return err
			}
			attempt := 0
			var firstErr error
			reply, err := c.Tx(ctx, []string{tc.key}, func(tx *shard.Tx) error {
				attempt++
				if attempt == 1 && tc.killFirst {
					if err := kill(); err != nil {
						return err
					}
				}
				n, err := redis.Int(tx.Do("GET", tc.key))
				if attempt == 1 {
					firstErr = err
				}
				if err != nil {
					return err
				}
				if attempt == 1 && !tc.killFirst {
					if err := kill(); err != nil {
						return err
					}
				}
				return tx.Queue("SET", tc.key, n+1)
			})
			if tc.killFirst {
				var ne *shard.NodeError
				require.True(t, errors.As(firstErr, &ne), "the first GET: %v", firstErr)
			}
			require.NoError(t, err)
			require.Equal(t, []any{"OK"}, reply)
			require.Equal(t, 2, attempt)
			v, err := redis.Int(c.Do(ctx, "GET", tc.key))
			require.NoError(t, err)
			require.Equal(t, 2, v)
		})
	}
}

// A write fn sent through tx.Do before the server closed the connection
// ran: the transaction, which did not run, is not run again, and its
// error says both.
func TestReview16TxKilledConnAfterAWriteIsNotRunAgain(t *testing.T) {
	server := redistest.StartTB(t, redistest.Options{})
	c := newClient(t, faultConfig(server.Addr, 5*time.Second))
	ctx := context.Background()

	attempt := 0
	_, err := c.Tx(ctx, []string{"r16wrote"}, func(tx *shard.Tx) error {
		attempt++
		if _, err := tx.Do("INCR", "r16wrote:count"); err != nil {
			return err
		}
		if _, err := server.Do("CLIENT", "KILL", "TYPE", "normal"); err != nil {
			return err
		}
		return tx.Queue("SET", "r16wrote", "v")
	})
	require.ErrorIs(t, err, shard.ErrTxNotRetried)
	var ne *shard.NodeError
	require.ErrorAs(t, err, &ne)
	var uo *shard.UnknownOutcomeError
	require.False(t, errors.As(err, &uo), "nothing of MULTI ... EXEC was sent: %v", err)
	require.Equal(t, 1, attempt)
	n, err := redis.Int(c.Do(ctx, "GET", "r16wrote:count"))
	require.NoError(t, err)
	require.Equal(t, 1, n)
	ex, err := redis.Int(c.Do(ctx, "EXISTS", "r16wrote"))
	require.NoError(t, err)
	require.Zero(t, ex)
}

// In cluster mode too, a connection the server closed before MULTI is
// replaced and the transaction runs again.
func TestReview16ClusterTxConnKilledBeforeMultiIsRunAgain(t *testing.T) {
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	cfg := shard.Config{Mode: shard.ModeCluster, Seeds: rc.Seeds()}
	cfg.Pool = pool.Options{DialTimeout: 3 * time.Second, ReadTimeout: 5 * time.Second, WriteTimeout: 5 * time.Second}
	cfg.Health.Interval = -1
	c := newClient(t, cfg)
	ctx := context.Background()
	a := rc.Masters()[0]
	key, _ := keyOnMaster(t, rc, a, "r16ckill")

	attempt := 0
	reply, err := c.Tx(ctx, []string{key}, func(tx *shard.Tx) error {
		attempt++
		if _, err := tx.Do("GET", key); err != nil {
			return err
		}
		if attempt == 1 {
			if _, err := a.Do("CLIENT", "KILL", "TYPE", "normal"); err != nil {
				return err
			}
		}
		return tx.Queue("INCR", key)
	})
	require.NoError(t, err)
	require.Equal(t, []any{int64(1)}, reply)
	require.Equal(t, 2, attempt)
}
