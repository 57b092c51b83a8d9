package shard_test

import (
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// TestReview11SentinelHooksWriteTimeoutIsUnknown is
// TestReview3HooksWriteTimeoutIsUnknown on a Sentinel shard, whose
// attempts are classified by rules of their own: a write whose reply did
// not come within the read timeout ends as an *UnknownOutcomeError, and
// its attempt and operation say unknown_outcome, not timeout; a read
// that timed out stays a timeout.
func TestReview11SentinelHooksWriteTimeoutIsUnknown(t *testing.T) {
	o := sentinelSetOptions(1)
	o.Sentinels = 1
	o.DownAfter = time.Minute // no failover while the master is stopped
	set := redistest.StartSentinelsTB(t, o)
	for _, tc := range []struct {
		name string
		args []any
		want shard.Outcome
	}{
		{"write", []any{"INCR"}, shard.OutcomeUnknown},
		{"read", []any{"GET"}, shard.OutcomeTimeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{}
			cfg := sentinelConfig(set)
			cfg.Pool.ReadTimeout = 300 * time.Millisecond
			cfg.Health.Interval = -1
			cfg.Hooks = rec.hooks()
			c := newClient(t, cfg)
			master, err := set.Master(0)
			require.NoError(t, err)
			got, err := outcomeOfPausedNode(t, c, rec, master, "r11uo:"+tc.name, tc.args...)
			checkOutcome(t, err, got, tc.want)
		})
	}
}
