package shard_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// killClients closes every client connection of s but the one asking.
func killClients(t *testing.T, s *redistest.Server) {
	t.Helper()
	_, err := s.Do("CLIENT", "KILL", "TYPE", "normal")
	require.NoError(t, err)
}

// TestReview10TxConnectionFailuresFeedHealth: a connection that fails
// under a command, once the command was written, counts as a failure of
// its node (NodeStats.Errors, and towards HealthOptions.FailureLimit)
// when Do sent the command. A Client.Tx's (a Tx.Do, its MULTI ... EXEC)
// and a Conn's transaction's counted nothing: a node that failed every
// transaction looked healthy and was never marked down.
func TestReview10TxConnectionFailuresFeedHealth(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, c *shard.Client, s *redistest.Server) error
	}{
		{"Tx.Do", func(t *testing.T, c *shard.Client, s *redistest.Server) error {
			_, err := c.Tx(ctx, []string{"r10h"}, func(tx *shard.Tx) error {
				killClients(t, s)
				_, err := tx.Do("GET", "r10h")
				return err
			})
			return err
		}},
		{"Tx EXEC", func(t *testing.T, c *shard.Client, s *redistest.Server) error {
			_, err := c.Tx(ctx, []string{"r10h"}, func(tx *shard.Tx) error {
				killClients(t, s)
				return tx.Queue("SET", "r10h", "v")
			})
			return err
		}},
		{"Conn", func(t *testing.T, c *shard.Client, s *redistest.Server) error {
			conn := c.Conn()
			defer conn.Close()
			if _, err := conn.Do("WATCH", "r10h"); err != nil {
				return fmt.Errorf("WATCH: %w", err)
			}
			killClients(t, s)
			_, err := conn.Do("GET", "r10h")
			return err
		}},
		{"Conn EXEC", func(t *testing.T, c *shard.Client, s *redistest.Server) error {
			conn := c.Conn()
			defer conn.Close()
			if _, err := conn.Do("WATCH", "r10h"); err != nil {
				return fmt.Errorf("WATCH: %w", err)
			}
			killClients(t, s)
			if err := conn.Send("MULTI"); err != nil {
				return err
			}
			if err := conn.Send("SET", "r10h", "v"); err != nil {
				return err
			}
			_, err := redis.Values(conn.Do("EXEC"))
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := redistest.StartTB(t, redistest.Options{})
			cfg := ringConfig([]*redistest.Server{s})
			cfg.Health.Interval = time.Hour // no health check clears the failure
			cfg.Health.FailureLimit = 1
			c := newClient(t, cfg)
			before := masterStatsOf(t, c, s.Addr).Errors
			err := tc.run(t, c, s)
			var ne *shard.NodeError
			require.ErrorAs(t, err, &ne, "on a killed connection")
			st := masterStatsOf(t, c, s.Addr)
			assert.Equal(t, int64(1), st.Errors-before, "NodeStats.Errors")
			assert.True(t, st.Down, "marked down (FailureLimit 1)")
		})
	}
}

// TestReview10TxSuccessClearsFailures: FailureLimit counts failures in a
// row. A transaction that the node served is a success, as a Do's reply
// is: two transactions that failed on either side of one that ran do
// not mark the node down.
func TestReview10TxSuccessClearsFailures(t *testing.T) {
	ctx := context.Background()
	s := redistest.StartTB(t, redistest.Options{})
	cfg := ringConfig([]*redistest.Server{s})
	cfg.Health.Interval = time.Hour // no health check clears the failures
	cfg.Health.FailureLimit = 2
	c := newClient(t, cfg)
	failing := func(tx *shard.Tx) error {
		// A write through Do first: the transaction is not run again
		// on a fresh connection, and fails once.
		if _, err := tx.Do("INCR", "r10s:n"); err != nil {
			return err
		}
		killClients(t, s)
		_, err := tx.Do("GET", "r10s")
		return err
	}
	_, err := c.Tx(ctx, []string{"r10s"}, failing)
	require.Error(t, err)
	require.False(t, masterStatsOf(t, c, s.Addr).Down, "one failure")
	// The node answers a whole transaction.
	conn := c.Conn()
	defer conn.Close()
	_, err = conn.Do("WATCH", "r10s")
	require.NoError(t, err)
	require.NoError(t, conn.Send("MULTI"))
	require.NoError(t, conn.Send("SET", "r10s", "v"))
	_, err = redis.Values(conn.Do("EXEC"))
	require.NoError(t, err)
	_, err = c.Tx(ctx, []string{"r10s"}, failing)
	require.Error(t, err)
	assert.False(t, masterStatsOf(t, c, s.Addr).Down, "a failure, a success, a failure: not two in a row")
}
