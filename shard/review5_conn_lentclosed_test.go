package shard_test

import (
	"context"
	"errors"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// TestReview5LentConnUsedAfterItsCallbackIsMatchable: the connection
// ForEachShard lends fails every call once the callback has returned. Its
// error matched no exported error, so a caller could not tell it from a
// node's failure; it now matches ErrConnClosed (and not ErrClosed: the
// Client is open).
func TestReview5LentConnUsedAfterItsCallbackIsMatchable(t *testing.T) {
	c, _ := startRing(t, 1)
	var kept redis.Conn
	err := c.ForEachShard(context.Background(), func(ctx context.Context, n shard.Node, conn redis.Conn) error {
		kept = conn
		return nil
	})
	require.NoError(t, err)
	require.NotNil(t, kept)
	calls := map[string]func() error{
		"Do":      func() error { _, err := kept.Do("PING"); return err },
		"Send":    func() error { return kept.Send("PING") },
		"Flush":   func() error { return kept.Flush() },
		"Receive": func() error { _, err := kept.Receive(); return err },
		"Err":     func() error { return kept.Err() },
	}
	for name, call := range calls {
		err := call()
		require.Error(t, err, name)
		require.True(t, errors.Is(err, shard.ErrConnClosed), "%s: %v", name, err)
		require.False(t, errors.Is(err, shard.ErrClosed), "%s: %v", name, err)
	}
}
