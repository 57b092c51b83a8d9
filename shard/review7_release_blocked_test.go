package shard_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A ForEachShard callback that sends a blocking command (BLPOP k 0) and
// returns without reading its reply: giving the connection back waited
// for that reply (the pool's return drains pending replies) until the
// read timeout, and an element pushed meanwhile was popped by a BLPOP
// nobody would read. The connection is now closed at once instead, so
// the call returns promptly and the server forgets the blocked client.
// Commands that answer at once are still drained, and their connection
// pooled.
func TestReview7ReleaseWithUnreadBlockingReply(t *testing.T) {
	const readTimeout = 5 * time.Second
	server := redistest.StartTB(t, redistest.Options{})
	c := newClient(t, faultConfig(server.Addr, readTimeout))
	ctx := context.Background()

	blocked := func() bool {
		info, err := server.Do("INFO", "clients")
		return err == nil && strings.Contains(info, "blocked_clients:1")
	}
	for _, tt := range []struct {
		name string
		cmds [][]any
	}{
		{"BLPOP", [][]any{{"BLPOP", "r7rel:list", 0}}},
		{"WATCH then BLPOP", [][]any{{"WATCH", "r7rel:w"}, {"BLPOP", "r7rel:list", 0}}},
		{"GET then BLPOP with a timeout", [][]any{{"GET", "r7rel:w"}, {"BLPOP", "r7rel:list", 30}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			err := c.ForEachShard(ctx, func(ctx context.Context, n shard.Node, conn redis.Conn) error {
				for _, cmd := range tt.cmds {
					if err := conn.Send(cmd[0].(string), cmd[1:]...); err != nil {
						return err
					}
				}
				if err := conn.Flush(); err != nil {
					return err
				}
				// Wait until the server holds it blocked: its reply
				// is then certainly unread when the callback returns.
				waitFor(t, 10*time.Second, "the BLPOP to block", blocked)
				return nil
			})
			require.NoError(t, err)
			took := time.Since(start)
			assert.Less(t, took, readTimeout/2, "ForEachShard waited for the unread BLPOP's reply")
			waitFor(t, 10*time.Second, "the blocked client to go", func() bool {
				info, err := server.Do("INFO", "clients")
				return err == nil && strings.Contains(info, "blocked_clients:0")
			})
			_, err = server.Do("RPUSH", "r7rel:list", "x")
			require.NoError(t, err)
			n, err := server.Do("LLEN", "r7rel:list")
			require.NoError(t, err)
			assert.Equal(t, "1", n, "the pushed element stays: no stale BLPOP took it")
			_, err = server.Do("DEL", "r7rel:list")
			require.NoError(t, err)
		})
	}

	// A reply that is on its way is still read, and the connection pooled.
	id := func(conn redis.Conn) int64 {
		v, err := redis.Int64(conn.Do("CLIENT", "ID"))
		require.NoError(t, err)
		return v
	}
	var first, second int64
	require.NoError(t, c.ForEachShard(ctx, func(ctx context.Context, n shard.Node, conn redis.Conn) error {
		first = id(conn)
		if err := conn.Send("GET", "r7rel:w"); err != nil {
			return err
		}
		return conn.Flush()
	}))
	require.NoError(t, c.ForEachShard(ctx, func(ctx context.Context, n shard.Node, conn redis.Conn) error {
		second = id(conn)
		return nil
	}))
	assert.Equal(t, first, second, "a connection with an unread GET reply is drained and pooled")
}
