package shard_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// A command the server refuses with a protocol error (a value over its
// proto-max-bulk-len) makes the server close the connection. Through the
// automatic pipeline that connection is shared: the next caller's command
// must not be written on it. The writer used to keep it, so the next
// caller's INCR failed with 'connection reset by peer', reported as a
// write of unknown outcome, on a healthy node.
//
// The server may also reset the connection while the value is still being
// written (the SET then fails with that write error, and the writer drops
// the connection itself): rounds go on until the protocol error has come
// back as the SET's reply three times. On a loaded machine the server
// reads the value slowly and most rounds end with the reset, so there are
// up to 300 of them (each takes about a millisecond).
func TestReview5AutoPipelineLeavesAConnectionClosedByAProtocolError(t *testing.T) {
	server := redistest.StartTB(t, redistest.Options{Args: []string{"--proto-max-bulk-len", "1mb"}})
	c := newClient(t, ringConfig([]*redistest.Server{server}))
	shard.AlwaysPipeline(c)
	ctx := context.Background()

	value := strings.Repeat("x", 1<<20+1)
	replied := 0
	for i := 0; i < 300 && replied < 3; i++ {
		_, err := c.Do(ctx, "SET", "review5:big", value)
		require.Error(t, err, "SET over proto-max-bulk-len")
		var re redis.Error
		if errors.As(err, &re) {
			require.Contains(t, err.Error(), "Protocol error")
			replied++
		}

		n, err := redis.Int(c.Do(ctx, "INCR", "review5:count"))
		require.NoError(t, err, "the next command after a protocol error (round %d)", i)
		require.Equal(t, i+1, n)
	}
	require.Equal(t, 3, replied, "the protocol error came back as the SET's reply %d times in 300", replied)
}
