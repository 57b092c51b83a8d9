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

// writerStuckInWrite reports whether an automatic pipeline's writer is
// blocked writing its batch to the socket.
func writerStuckInWrite() bool {
	return goroutineIn("shard.(*pipeConn).send", "net.(*conn).Write")
}

// A write that the server takes longer than the read timeout to accept
// (here: a 32 MiB value while the server is stopped for twice the read
// timeout), but within the write timeout, is answered as soon as the
// server has it. The reply's wait starts once the command is written, as
// on a connection of its own: through the automatic pipeline the reply
// used to be due a read timeout after the writer started the batch, so
// the SET failed with a timeout although the server answered at once (and
// the connection was dropped, every other caller's command on it with it).
func TestReview5AutoPipelineReplyDeadlineStartsAfterTheWrite(t *testing.T) {
	const readTimeout = 500 * time.Millisecond
	for _, auto := range []bool{false, true} {
		name := "own connection"
		if auto {
			name = "automatic pipeline"
		}
		t.Run(name, func(t *testing.T) {
			server := redistest.StartTB(t, redistest.Options{})
			cfg := faultConfig(server.Addr, readTimeout)
			cfg.Pool.WriteTimeout = 20 * time.Second
			cfg.DisableAutoPipeline = !auto
			c := newClient(t, cfg)
			if auto {
				shard.AlwaysPipeline(c)
			}
			ctx := context.Background()
			_, err := c.Do(ctx, "SET", "review5:warm", "1") // dial while it answers
			require.NoError(t, err)

			value := strings.Repeat("v", 32<<20)
			require.NoError(t, server.Pause())
			resumed := false
			defer func() {
				if !resumed {
					_ = server.Resume()
				}
			}()
			start := time.Now()
			done := make(chan error, 1)
			go func() {
				_, err := c.Do(ctx, "SET", "review5:big", value)
				done <- err
			}()
			waitFor(t, 10*time.Second, "the write to be stuck for twice the read timeout", func() bool {
				return time.Since(start) > 2*readTimeout && (!auto || writerStuckInWrite())
			})
			require.NoError(t, server.Resume())
			resumed = true
			select {
			case err := <-done:
				require.NoError(t, err, "SET of a value written in %v", time.Since(start))
			case <-time.After(15 * time.Second):
				t.Fatal("the SET never returned")
			}
			n, err := server.Do("STRLEN", "review5:big")
			require.NoError(t, err)
			require.Equal(t, "33554432", n)
		})
	}
}
