package reshard

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/shard"
)

// TestReview5DumpMoveKeepsAnOperatorsPause: an operator paused the old
// node's writes (CLIENT PAUSE ... WRITE, say before promoting its replica).
// Redis keeps one pause for every CLIENT PAUSE, so the DUMP/RESTORE
// path's CLIENT UNPAUSE lifted the operator's pause with its own: writes
// the operator held back ran on the old master. The batch must wait for
// the operator's pause to end, and fail when it does not, leaving it on.
func TestReview5DumpMoveKeepsAnOperatorsPause(t *testing.T) {
	ctx := context.Background()
	r := newDumpRig(t, time.Second)
	servers, m, src := r.servers, r.m, r.src
	_, err := servers[0].Do("SET", "k", "v")
	require.NoError(t, err)

	_, err = servers[0].Do("CLIENT", "PAUSE", "60000", "WRITE") // the operator's
	require.NoError(t, err)
	defer servers[0].Do("CLIENT", "UNPAUSE")

	_, err = m.dumpMove(ctx, r.conn, src, r.dst, []string{"k"})
	require.Error(t, err, "the old node's writes stayed paused by someone else")
	var nerr *shard.NodeError
	require.True(t, errors.As(err, &nerr), "a NodeError names the old node: %v", err)
	require.Equal(t, src.Addr, nerr.Node.Addr)
	n, err := servers[1].Do("EXISTS", "k")
	require.NoError(t, err)
	require.Equal(t, "0", n, "nothing moved")

	// The operator's pause is still on: a write waits (CLIENT LIST flag b).
	requireWritesHeldUntilUnpause(t, servers[0], "review5-writer")
}
