package reshard

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/shard"
)

// TestReview7DumpMoveKeepsAPauseTakenDuringTheBatch: an operator pauses
// the old node's writes (CLIENT PAUSE ... WRITE) while a DUMP/RESTORE
// batch holds its own pause. Redis keeps one pause for every CLIENT PAUSE
// (the later end wins) and CLIENT UNPAUSE ends it, so the batch's UNPAUSE
// lifted the operator's pause too, and the writes it held back ran on the
// old master. (review5_operator_pause_test.go covers a pause taken before
// the batch.) The batch must leave the pause on and fail with
// ErrPausedByOther (its old copies cannot be deleted while writes are
// paused), and a write waits until the operator lifts it.
func TestReview7DumpMoveKeepsAPauseTakenDuringTheBatch(t *testing.T) {
	ctx := context.Background()
	r := newDumpRig(t, time.Second)
	servers, m, src := r.servers, r.m, r.src
	_, err := servers[0].Do("SET", "k", "v")
	require.NoError(t, err)
	defer servers[0].Do("CLIENT", "UNPAUSE")

	var opErr error
	testHookPaused = func() {
		_, opErr = servers[0].Do("CLIENT", "PAUSE", "60000", "WRITE") // the operator's
	}
	defer func() { testHookPaused = nil }()
	_, err = m.dumpMove(ctx, r.conn, src, r.dst, []string{"k"})
	require.NoError(t, opErr)
	require.ErrorIs(t, err, ErrPausedByOther)
	var nerr *shard.NodeError
	require.True(t, errors.As(err, &nerr), "a NodeError names the old node: %v", err)
	require.Equal(t, src.Addr, nerr.Node.Addr)
	// Restored at the new node; the old copy, which the paused node
	// cannot delete, stays (the next move keeps the new one).
	n, err := servers[1].Do("EXISTS", "k")
	require.NoError(t, err)
	require.Equal(t, "1", n, "the key at the new node")
	require.EqualValues(t, 0, m.busy.Load(), "busy")

	// The operator's pause is still on: a write waits (CLIENT LIST flag b).
	requireWritesHeldUntilUnpause(t, servers[0], "review7-writer")
}
