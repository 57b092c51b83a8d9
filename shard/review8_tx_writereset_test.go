package shard_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A value far over proto-max-bulk-len: the server refuses its header and
// closes the connection while the client is still writing the value, whose
// write then fails (reset). What is after that point was never written,
// and the server ran none of it. A transaction used to report such a
// write failure as of unknown outcome: Client.Tx's EXEC (the EXEC was
// never complete, so nothing of MULTI ... EXEC ran), and on a Conn the
// EXEC and a write after the big value in the same flush (never handed to
// the connection). The counter each round would have incremented shows
// what the server ran; the node stays up.
func TestReview8TransactionWriteResetIsNotOfUnknownOutcome(t *testing.T) {
	server := redistest.StartTB(t, redistest.Options{Args: []string{"--proto-max-bulk-len", "1mb"}})
	cfg := ringConfig([]*redistest.Server{server})
	c := newClient(t, cfg)
	ctx := context.Background()
	big := strings.Repeat("x", 32<<20)
	txWith := func(value string) func() error {
		return func() error {
			_, err := c.Tx(ctx, []string{"r8reset:k"}, func(tx *shard.Tx) error {
				if err := tx.Queue("SET", "r8reset:k", value); err != nil {
					return err
				}
				return tx.Queue("INCR", "r8reset:n")
			})
			return err
		}
	}
	tests := []struct {
		name string
		run  func() error // r8reset:n is incremented after the big value, if at all
	}{
		// The write of the big value fails (in Send).
		{"Tx", txWith(big)},
		// The value goes out whole, the server's reset comes at the
		// write of what follows it (in Flush), or its protocol error
		// reply is read.
		{"Tx, value just over the limit", txWith(strings.Repeat("x", 1<<20+1))},
		{"Tx, value over the limit", txWith(strings.Repeat("x", 2<<20))},
		{"Tx.Do", func() error {
			_, err := c.Tx(ctx, []string{"r8reset:k"}, func(tx *shard.Tx) error {
				_, err := tx.Do("SET", "r8reset:k", big)
				return err
			})
			return err
		}},
		{"Conn MULTI/EXEC", func() error {
			conn := c.Conn()
			defer conn.Close()
			for _, cmd := range [][]any{{"WATCH", "r8reset:k"}, {"MULTI"}, {"SET", "r8reset:k", big}, {"INCR", "r8reset:n"}} {
				if err := conn.Send(cmd[0].(string), cmd[1:]...); err != nil {
					return err
				}
			}
			_, err := conn.Do("EXEC")
			return err
		}},
		{"Conn under WATCH", func() error {
			conn := c.Conn()
			defer conn.Close()
			if _, err := conn.Do("WATCH", "r8reset:k"); err != nil {
				return err
			}
			if err := conn.Send("SET", "r8reset:k", big); err != nil {
				return err
			}
			_, err := conn.Do("INCR", "r8reset:n")
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resets := 0
			for i := 0; i < 20; i++ {
				err := tt.run()
				require.Error(t, err, "round %d", i)
				var re redis.Error
				if !errors.As(err, &re) {
					resets++
				}
				n, gerr := redis.Int(c.Do(ctx, "GET", "r8reset:n"))
				if !errors.Is(gerr, redis.ErrNil) {
					require.NoError(t, gerr)
				}
				require.Zero(t, n, "round %d: the server ran the increment (%v)", i, err)
				var ue *shard.UnknownOutcomeError
				assert.False(t, errors.As(err, &ue), "round %d: nothing after the big value ran, yet: %v", i, err)
			}
			t.Logf("%d of 20 rounds ended in a write reset", resets)
			require.False(t, c.Stats().Nodes[0].Down, "the node was marked down")
			_, err := c.Do(ctx, "SET", "r8reset:ok", "1")
			require.NoError(t, err)
		})
	}
}
