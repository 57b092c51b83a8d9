package shard_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview15CloseCutCommandOutcome: a blocking command that Close cuts
// off while it waits for its reply is reported on its node as what Close
// made of it, not as a context the caller cancelled: a write (BLPOP) may
// have run (OutcomeUnknown), a read (XREAD) failed on a closed client
// (OutcomeFailed); the event's error wraps ErrClosed, as the caller's does.
func TestReview15CloseCutCommandOutcome(t *testing.T) {
	cases := []struct {
		name, cmd string
		args      []any
		want      shard.Outcome
	}{
		{"write", "blpop", []any{"BLPOP", "r15closecut:list", 0}, shard.OutcomeUnknown},
		{"read", "xread", []any{"XREAD", "BLOCK", 0, "STREAMS", "r15closecut:stream", "$"}, shard.OutcomeFailed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			servers := redistest.StartNTB(t, 1, redistest.Options{})
			rec := &recorder{}
			cfg := ringConfig(servers)
			cfg.Hooks = rec.hooks()
			c, err := shard.New(context.Background(), cfg)
			require.NoError(t, err)
			done := make(chan error, 1)
			go func() {
				_, err := c.Do(context.Background(), tc.args[0].(string), tc.args[1:]...)
				done <- err
			}()
			waitFor(t, 15*time.Second, tc.cmd+" in flight", func() bool {
				list, err := servers[0].Do("CLIENT", "LIST")
				return err == nil && strings.Contains(list, "cmd="+tc.cmd+" ")
			})
			require.NoError(t, c.Close())
			select {
			case err := <-done:
				require.ErrorIs(t, err, shard.ErrClosed)
				assert.NotErrorIs(t, err, context.Canceled)
			case <-time.After(15 * time.Second):
				t.Fatalf("%s did not return after Close", tc.cmd)
			}
			got := rec.snapshot()
			var found bool
			for _, ev := range got.commands {
				if !strings.EqualFold(ev.Name, tc.cmd) {
					continue
				}
				found = true
				assert.Equal(t, tc.want, ev.Outcome, "%s event: %v", tc.cmd, ev.Err)
				assert.ErrorIs(t, ev.Err, shard.ErrClosed, "%s event's error", tc.cmd)
				assert.NotErrorIs(t, ev.Err, context.Canceled, "%s event's error", tc.cmd)
			}
			assert.True(t, found, "no Command event for %s", tc.cmd)
		})
	}
}
