package shard_test

import (
	"context"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTxQueueKeepsItsArguments: a caller that reuses one argument slice
// for several queued commands (as redigo's Send allows) gets each command
// with the arguments it had when queued.
func TestTxQueueKeepsItsArguments(t *testing.T) {
	c, _ := startRing(t, 3)
	ctx := context.Background()
	k := "{q}k"
	buf := []any{k, ""}
	_, err := c.Tx(ctx, []string{k}, func(tx *shard.Tx) error {
		for _, v := range []string{"a", "b", "c"} {
			buf[1] = v
			if err := tx.Queue("RPUSH", buf...); err != nil {
				return err
			}
		}
		return nil
	})
	require.NoError(t, err)
	got, err := redis.Strings(c.Do(ctx, "LRANGE", k, 0, -1))
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b", "c"}, got)
}

// TestBlockingCommandOnAPinnedConnection: a blocking command sent inside a
// transaction's callback, or on a Conn pinned by WATCH, waits as long as
// it asked the server to block (2 s), past the read timeout (1 s), as
// through Client.Do; a context that ends first still cuts it short.
func TestBlockingCommandOnAPinnedConnection(t *testing.T) {
	c, _ := startRing(t, 2) // ReadTimeout 1s
	tests := []struct {
		name string
		run  func(ctx context.Context, key string, block int) error
	}{
		{"Tx.Do", func(ctx context.Context, key string, block int) error {
			_, err := c.Tx(ctx, []string{key}, func(tx *shard.Tx) error {
				_, err := tx.Do("BLPOP", key, block)
				return err
			})
			return err
		}},
		{"Conn after WATCH", func(ctx context.Context, key string, block int) error {
			conn := c.Conn()
			defer conn.Close()
			if _, err := redis.DoContext(conn, ctx, "WATCH", key); err != nil {
				return err
			}
			_, err := redis.DoContext(conn, ctx, "BLPOP", key, block)
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key := "{blk}" + tt.name
			start := time.Now()
			require.NoError(t, tt.run(context.Background(), key, 2))
			assert.GreaterOrEqual(t, time.Since(start), 2*time.Second, "BLPOP 2 timed out on the server")

			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			start = time.Now()
			err := tt.run(ctx, key, 0)
			assert.ErrorIs(t, err, context.DeadlineExceeded)
			assert.Less(t, time.Since(start), time.Second)
			_, err = c.Do(context.Background(), "SET", key+"2", 1)
			assert.NoError(t, err, "the client works on")
		})
	}
}

// TestConnDoEmptyKeepsTheRepliesBesideAFailure: Do("") after a command
// that could not be routed returns every reply, that command's error in
// its place, and that error.
func TestConnDoEmptyKeepsTheRepliesBesideAFailure(t *testing.T) {
	c, _ := startRing(t, 3)
	conn := c.Conn()
	defer conn.Close()
	require.NoError(t, conn.Send("SET", "a", 1))
	require.NoError(t, conn.Send("FOOBARCMD"))
	require.NoError(t, conn.Send("GET", "a"))
	v, err := conn.Do("")
	require.Error(t, err)
	out, ok := v.([]any)
	require.True(t, ok, "Do(\"\") = %#v", v)
	require.Len(t, out, 3)
	assert.Equal(t, "OK", out[0])
	assert.Equal(t, []byte("1"), out[2])
	assert.ErrorIs(t, out[1].(error), err)
}
