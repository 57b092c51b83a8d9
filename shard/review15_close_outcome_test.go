package shard_test

import (
	"context"
	"strings"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview15CloseCutCommandOutcome: a blocking command that Close cuts
// off while it waits for its reply is reported on its node as what Close
// made of it, not as a context the caller cancelled: a write (BLPOP) may
// have run (OutcomeUnknown), a read (XREAD) failed on a closed client
// (OutcomeFailed); the event's error wraps ErrClosed, as the caller's does,
// and the operation's Finish says the same.
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
			rec, err := startCloseCut(t, ringConfig(servers), servers, tc.cmd, tc.cmd, func(c *shard.Client) error {
				_, err := c.Do(context.Background(), tc.args[0].(string), tc.args[1:]...)
				return err
			})
			require.ErrorIs(t, err, shard.ErrClosed)
			assert.NotErrorIs(t, err, context.Canceled)
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
			// The operation (Finish) says what the node's event says.
			require.Len(t, got.ops, 1)
			assert.Equal(t, tc.want, got.ops[0].Outcome, "operation's outcome: %v", got.ops[0].Err)
			assert.ErrorIs(t, got.ops[0].Err, shard.ErrClosed)
		})
	}
}

// TestReview15CloseCutPipelineOutcome: the same for a BLPOP sent in a
// pipeline with another command to its node: the Pipeline event counts
// it as of unknown outcome, with the error wrapping ErrClosed.
func TestReview15CloseCutPipelineOutcome(t *testing.T) {
	servers := redistest.StartNTB(t, 1, redistest.Options{})
	rec, err := startCloseCut(t, ringConfig(servers), servers, "blpop", "the pipeline", func(c *shard.Client) error {
		p := c.Pipeline()
		p.Send("SET", "r15closecut:other", "v")
		p.Send("BLPOP", "r15closecut:pipe", 0)
		res, err := p.Exec(context.Background())
		if err == nil && len(res) == 2 {
			err = res[1].Err
		}
		return err
	})
	require.ErrorIs(t, err, shard.ErrClosed)
	got := rec.snapshot()
	require.Len(t, got.pipelines, 1, "commands: %+v", got.commands)
	ev := got.pipelines[0]
	assert.Equal(t, 1, ev.Outcomes[shard.OutcomeOK], "%+v", ev.Outcomes)
	assert.Equal(t, 1, ev.Outcomes[shard.OutcomeUnknown], "%+v", ev.Outcomes)
	assert.Zero(t, ev.Outcomes[shard.OutcomeCanceled], "%+v", ev.Outcomes)
	assert.Equal(t, shard.OutcomeUnknown, ev.Outcome)
	assert.ErrorIs(t, ev.Err, shard.ErrClosed)
	assert.NotErrorIs(t, ev.Err, context.Canceled)
	// The operation (Finish) says what the node's event says.
	require.Len(t, got.ops, 1)
	assert.Equal(t, shard.OutcomeUnknown, got.ops[0].Outcome, "operation's outcome: %v", got.ops[0].Err)
	assert.ErrorIs(t, got.ops[0].Err, shard.ErrClosed)
}
