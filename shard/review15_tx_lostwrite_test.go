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

// TestTxFailureAfterLostWriteReplySaysTheWriteMayHaveRun: fn's write
// through tx.Do runs on the node, and its reply is lost with the
// connection (the node closes it for a reply over its output buffer
// limit); fn ignores the *UnknownOutcomeError and returns nil. MULTI ...
// EXEC then fails on the dead connection. The transaction's error must
// tell the caller that fn's write may have run: it wraps that
// *UnknownOutcomeError, and stays a *NodeError of the node.
func TestTxFailureAfterLostWriteReplySaysTheWriteMayHaveRun(t *testing.T) {
	ctx := context.Background()
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	c := newClient(t, clusterConfig(rc.Seeds()...))
	const w, src, dst = "{r15txlw}w", "{r15txlw}src", "{r15txlw}dst"
	big := strings.Repeat("z", 256<<10)
	_, err := c.Do(ctx, "RPUSH", src, big, big)
	require.NoError(t, err)
	for _, s := range rc.Nodes {
		_, err := s.Do("CONFIG", "SET", "client-output-buffer-limit", "normal 64kb 0 0")
		require.NoError(t, err)
	}
	t.Cleanup(func() {
		for _, s := range rc.Nodes {
			_, _ = s.Do("CONFIG", "SET", "client-output-buffer-limit", "normal 0 0 0")
		}
	})

	var firstErr error
	_, err = c.Tx(ctx, []string{w}, func(tx *shard.Tx) error {
		_, firstErr = tx.Do("RPOPLPUSH", src, dst) // ignored
		return tx.Queue("GET", w)
	})
	var fuo *shard.UnknownOutcomeError
	require.ErrorAs(t, firstErr, &fuo, "RPOPLPUSH with a reply over the output buffer limit")
	require.Error(t, err)

	var uo *shard.UnknownOutcomeError
	require.ErrorAs(t, err, &uo, "the transaction's error hides that fn's write may have run: %v", err)
	require.Equal(t, "RPOPLPUSH", uo.Command)
	var ne *shard.NodeError
	require.ErrorAs(t, err, &ne)
	require.Equal(t, fuo.Node.Addr, ne.Node.Addr)
	require.Contains(t, err.Error(), "RPOPLPUSH")

	for _, s := range rc.Nodes {
		_, err := s.Do("CONFIG", "SET", "client-output-buffer-limit", "normal 0 0 0")
		require.NoError(t, err)
	}
	n, err := redis.Int(c.Do(ctx, "LLEN", dst))
	require.NoError(t, err)
	require.Equal(t, 1, n, "RPOPLPUSH ran once")
}
