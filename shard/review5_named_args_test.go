package shard_test

import (
	"context"
	"errors"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// word is a type of its own over string, as applications define for
// command names and options; redigo and shardis send it as its text.
type word string

// A command spelled with such a type changes the connection's state as
// much as one spelled with plain strings: Do refuses CLIENT REPLY OFF
// before sending it (a connection that answers nothing would go back to
// the pool), and a CLIENT SETNAME run on a lent connection does not
// reach the next borrower.
func TestStateChangingCommandsSpelledWithANamedStringType(t *testing.T) {
	ctx := context.Background()
	srv := redistest.StartTB(t, redistest.Options{})
	cfg := ringConfig([]*redistest.Server{srv})
	cfg.Pool.ClientName = "named"
	cfg.DisableAutoPipeline = true
	c := newClient(t, cfg)

	_, err := c.Do(ctx, "CLIENT", word("REPLY"), word("OFF"))
	t.Logf("CLIENT REPLY OFF as word: %v", err)
	require.True(t, errors.Is(err, shard.ErrConnState), "CLIENT REPLY OFF as word: %v; want ErrConnState", err)
	_, err = c.Do(ctx, "SET", "named:k", "still answering")
	require.NoError(t, err)
	got, err := redis.String(c.Do(ctx, "GET", "named:k"))
	require.NoError(t, err)
	require.Equal(t, "still answering", got)

	err = c.ForEachShard(ctx, func(ctx context.Context, _ shard.Node, conn redis.Conn) error {
		_, err := conn.Do("CLIENT", word("SETNAME"), word("intruder"))
		return err
	})
	require.NoError(t, err)
	for i := 0; i < 3; i++ {
		err = c.ForEachShard(ctx, func(ctx context.Context, _ shard.Node, conn redis.Conn) error {
			name, err := redis.String(conn.Do("CLIENT", "GETNAME"))
			if err != nil {
				return err
			}
			if name != "named" {
				return errors.New("borrowed a connection named " + name)
			}
			return nil
		})
		require.NoError(t, err)
	}
}
