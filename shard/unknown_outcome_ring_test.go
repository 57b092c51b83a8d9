package shard_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// TestRingWriteWithUnknownOutcome: in ring mode as in cluster mode, a
// write whose connection failed after it was sent (here: no reply within
// the read timeout) is an *UnknownOutcomeError, so that a caller can tell
// it from a write that never left (a refused dial) before it retries; a
// read that failed so is a plain *NodeError. Both still match NodeError.
func TestRingWriteWithUnknownOutcome(t *testing.T) {
	for _, tc := range []struct {
		name        string
		args        []any
		stopped     bool // the server is stopped (SIGSTOP) rather than killed
		wantUnknown bool
	}{
		{"write, no reply in time", []any{"SET", "uo:k", "v"}, true, true},
		{"INCR, no reply in time", []any{"INCR", "uo:n"}, true, true},
		{"read, no reply in time", []any{"GET", "uo:k"}, true, false},
		{"write, server gone: never sent", []any{"SET", "uo:k", "v"}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, server := oneServerRing(t, 200*time.Millisecond)
			ctx := context.Background()
			if tc.stopped {
				_, err := c.Do(ctx, "GET", "uo:k") // a pooled connection is open
				require.NoError(t, err)
				require.NoError(t, server.Pause())
				defer server.Resume()
			} else {
				require.NoError(t, server.Kill())
			}
			_, err := c.Do(ctx, tc.args[0].(string), tc.args[1:]...)
			require.Error(t, err)
			var ne *shard.NodeError
			require.True(t, errors.As(err, &ne), "a *NodeError: %v", err)
			var uo *shard.UnknownOutcomeError
			require.Equal(t, tc.wantUnknown, errors.As(err, &uo), "an *UnknownOutcomeError: %v", err)
			if tc.wantUnknown {
				require.Equal(t, tc.args[0], uo.Command)
				require.Equal(t, server.Addr, uo.Node.Addr)
			}
		})
	}
}
