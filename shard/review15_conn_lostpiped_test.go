package shard_test

import (
	"context"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// TestConnDoFailureAfterLostWriteSaysTheWriteMayHaveRun: a write queued
// with Send and a read sent by Do go to the node in one pipeline; the
// write runs, and its reply is lost with the connection (the node closes
// it for a reply over its output buffer limit). Do returns its own
// command's failure and drops the other replies, so that failure must
// say that the write sent with it may have run: it wraps the write's
// *UnknownOutcomeError, and stays a *NodeError of the node.
func TestConnDoFailureAfterLostWriteSaysTheWriteMayHaveRun(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 1, redistest.Options{})
	s := servers[0]
	c := newClient(t, ringConfig(servers))
	big := strings.Repeat("z", 256<<10)
	_, err := c.Do(ctx, "RPUSH", "r15cdl:src", big, big)
	require.NoError(t, err)
	_, err = s.Do("CONFIG", "SET", "client-output-buffer-limit", "normal 64kb 0 0")
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = s.Do("CONFIG", "SET", "client-output-buffer-limit", "normal 0 0 0") })

	conn := c.Conn()
	defer conn.Close()
	require.NoError(t, conn.Send("RPOPLPUSH", "r15cdl:src", "r15cdl:dst"))
	_, err = conn.Do("GET", "r15cdl:w")
	require.Error(t, err)
	var uo *shard.UnknownOutcomeError
	require.ErrorAs(t, err, &uo, "Do's error hides that the write sent with it may have run: %v", err)
	require.Equal(t, "RPOPLPUSH", uo.Command)
	var ne *shard.NodeError
	require.ErrorAs(t, err, &ne)
	require.Equal(t, s.Addr, ne.Node.Addr)

	_, err = s.Do("CONFIG", "SET", "client-output-buffer-limit", "normal 0 0 0")
	require.NoError(t, err)
	n, err := redis.Int(c.Do(ctx, "LLEN", "r15cdl:dst"))
	require.NoError(t, err)
	require.Equal(t, 1, n, "RPOPLPUSH ran once")
}
