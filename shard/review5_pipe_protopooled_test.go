package shard_test

import (
	"context"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/stretchr/testify/require"
)

// On pooled connections (automatic pipelining off), a command the server
// refuses with a protocol error (a value over proto-max-bulk-len) ends
// its connection: the server closes it and runs nothing sent after the
// command. The commands after it in the pipeline fail, but the node did
// nothing wrong: it stays up, and the next commands (on other
// connections) succeed. The reader used to read on into the closed
// connection, count a node failure for each such pipeline (three in a row
// marked the node down: every command then failed with 'node is down'),
// and a lone SET's connection went back to the pool closed, so the next
// caller's INCR failed with 'connection reset by peer'.
func TestReview5ProtocolErrorDoesNotFailThePooledNode(t *testing.T) {
	server := redistest.StartTB(t, redistest.Options{Args: []string{"--proto-max-bulk-len", "1mb"}})
	cfg := ringConfig([]*redistest.Server{server})
	cfg.DisableAutoPipeline = true
	c := newClient(t, cfg)
	ctx := context.Background()
	value := strings.Repeat("x", 1<<20+1)

	count := 0
	for i := range 50 {
		_, err := c.Do(ctx, "SET", "review5:big", value)
		require.Error(t, err, "SET over proto-max-bulk-len")
		n, err := redis.Int(c.Do(ctx, "INCR", "review5:count"))
		require.NoError(t, err, "INCR after a lone SET refused with a protocol error (round %d)", i)
		count++
		require.Equal(t, count, n)
	}
	for i := range 20 {
		p := c.Pipeline()
		p.Send("INCR", "review5:count")
		p.Send("SET", "review5:big", value)
		p.Send("INCR", "review5:other")
		res, err := p.Exec(ctx)
		require.NoError(t, err)
		require.Len(t, res, 3)
		if res[0].Err == nil {
			count++
			n, err := redis.Int(res[0].Reply, nil)
			require.NoError(t, err)
			require.Equal(t, count, n)
		} else {
			// The server reset the connection while the value was being
			// written: the pipeline's write failed as a whole, after
			// the server may have run the first INCR.
			require.NotContains(t, res[0].Err.Error(), "node is down", "round %d", i)
		}
		require.Error(t, res[1].Err, "SET over proto-max-bulk-len")
		require.Error(t, res[2].Err, "INCR written after the refused SET")
		n, err := redis.Int(c.Do(ctx, "INCR", "review5:count"))
		require.NoError(t, err, "INCR after a pipeline with a protocol error (round %d)", i)
		if res[0].Err == nil {
			require.Equal(t, count+1, n)
		} else {
			require.Contains(t, []int{count + 1, count + 2}, n)
		}
		count = n
	}
	other, err := server.Do("EXISTS", "review5:other")
	require.NoError(t, err)
	require.Equal(t, "0", other, "the INCR written after the refused SET ran")
}
