package shard_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// TestContextEndAfterSendSaysTheCommandMayHaveRun: a caller whose context
// ends while it waits for the reply of a command already written gets an
// error that still matches the context's (errors.Is) and says that the
// command may have run, on a pooled connection as through the automatic
// pipeline; and it did run. A caller that retries an INCR on a bare
// "deadline exceeded" counts twice.
func TestContextEndAfterSendSaysTheCommandMayHaveRun(t *testing.T) {
	for _, tc := range []struct {
		name string
		pipe bool
	}{{"pooled", false}, {"auto pipeline", true}} {
		t.Run(tc.name, func(t *testing.T) {
			servers := redistest.StartNTB(t, 1, redistest.Options{})
			c := newClient(t, ringConfig(servers))
			if tc.pipe {
				shard.AlwaysPipeline(c)
			}
			ctx := context.Background()
			_, err := c.Do(ctx, "GET", "sent:n") // a connection is open: the INCR is written at once
			require.NoError(t, err)

			require.NoError(t, servers[0].Pause())
			short, cancel := context.WithTimeout(ctx, 150*time.Millisecond)
			_, err = c.Do(short, "INCR", "sent:n")
			cancel()
			require.NoError(t, servers[0].Resume())
			require.ErrorIs(t, err, context.DeadlineExceeded)
			require.True(t, strings.Contains(err.Error(), "may have run"), "the error says the INCR may have run: %v", err)

			n, err := servers[0].Do("GET", "sent:n")
			require.NoError(t, err)
			require.Equal(t, "1", n, "the INCR ran once the server went on")
		})
	}
}
