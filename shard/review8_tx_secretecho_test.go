package shard_test

import (
	"context"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A server that does not know a command (MIGRATE renamed away) repeats
// its arguments in the error reply; Client.Do hides the secrets among
// them (MIGRATE's AUTH password), but a transaction's reply went to the
// caller as it came, password included: Tx.Do, Tx.Queue (MULTI ... EXEC)
// and a Conn's command under WATCH.
func TestReview8TransactionHidesASecretEchoedBack(t *testing.T) {
	server := redistest.StartTB(t, redistest.Options{Args: []string{"--rename-command", "MIGRATE", "\"\""}})
	cfg := ringConfig([]*redistest.Server{server})
	c := newClient(t, cfg)
	ctx := context.Background()
	const secret = "r8-migrate-secret"
	migrate := []any{"127.0.0.1", "1", "r8echo:k", "0", "1000", "AUTH", secret}
	tests := []struct {
		name string
		run  func() error
	}{
		{"Client.Do", func() error {
			_, err := c.Do(ctx, "MIGRATE", migrate...)
			return err
		}},
		{"Tx.Do", func() error {
			_, err := c.Tx(ctx, []string{"r8echo:k"}, func(tx *shard.Tx) error {
				_, err := tx.Do("MIGRATE", migrate...)
				return err
			})
			return err
		}},
		{"Tx.Queue", func() error {
			_, err := c.Tx(ctx, []string{"r8echo:k"}, func(tx *shard.Tx) error {
				return tx.Queue("MIGRATE", migrate...)
			})
			return err
		}},
		{"Conn under WATCH", func() error {
			conn := c.Conn()
			defer conn.Close()
			if _, err := conn.Do("WATCH", "r8echo:k"); err != nil {
				return err
			}
			_, err := conn.Do("MIGRATE", migrate...)
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.run()
			require.Error(t, err)
			var re redis.Error
			require.ErrorAs(t, err, &re, "the server's reply: %v", err)
			assert.Contains(t, err.Error(), "unknown command")
			assert.NotContains(t, err.Error(), secret)
		})
	}
}
