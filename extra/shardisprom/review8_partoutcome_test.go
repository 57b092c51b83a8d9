package shardisprom_test

import (
	"context"
	"testing"
	"time"

	"github.com/shardis/shardis/extra/shardisprom"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
)

// TestReview8PipelinePartOutcomeIsItsFailure: a node's part of a pipeline
// is observed with the outcome of a command that failed for good when
// there is one, whatever the order of its commands: a part whose first
// failing command was a redirect (followed, so not a failure) and whose
// second failed with a server error was observed as "redirect", and an
// error rate over the outcome label missed it.
func TestReview8PipelinePartOutcomeIsItsFailure(t *testing.T) {
	const node = "10.0.0.1:7000"
	part := func(first shard.Outcome, counts map[shard.Outcome]int) *shard.PipelineEvent {
		ev := &shard.PipelineEvent{Node: shard.Node{Name: node, Addr: node}, Outcome: first, Duration: time.Millisecond}
		for o, n := range counts {
			ev.Outcomes[o] = n
			ev.Commands += n
		}
		if first == shard.OutcomeRedirect {
			ev.Redirects = []shard.Redirect{{Kind: "MOVED", Slot: 1, From: ev.Node, To: shard.Node{Addr: "10.0.0.2:7000"}}}
		}
		return ev
	}
	cases := []struct {
		name string
		ev   *shard.PipelineEvent
		want string
	}{
		{"all ok", part(shard.OutcomeOK, map[shard.Outcome]int{shard.OutcomeOK: 3}), "ok"},
		{"redirect only", part(shard.OutcomeRedirect, map[shard.Outcome]int{shard.OutcomeOK: 1, shard.OutcomeRedirect: 1}), "redirect"},
		{"redirect then server error", part(shard.OutcomeRedirect, map[shard.Outcome]int{shard.OutcomeRedirect: 1, shard.OutcomeServerError: 1}), "server_error"},
		{"server error then redirect", part(shard.OutcomeServerError, map[shard.Outcome]int{shard.OutcomeRedirect: 1, shard.OutcomeServerError: 1}), "server_error"},
		{"redirect then retry", part(shard.OutcomeRedirect, map[shard.Outcome]int{shard.OutcomeRedirect: 2, shard.OutcomeRetry: 1}), "retry"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := shardisprom.NewDurations(nil, nil)
			d.Hooks().Pipeline(context.Background(), tc.ev)
			assert.Equal(t, map[string]uint64{node + " PIPELINE " + tc.want: 1}, durationSeries(t, d))
		})
	}
}
