package shard_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// outcomeOfPausedNode sends args through a client over a node that is
// stopped (SIGSTOP) after a first command opened a pooled connection, and
// returns the caller's error and the recorded hook events.
func outcomeOfPausedNode(t *testing.T, c *shard.Client, rec *recorder, node *redistest.Server, key string, args ...any) (*recorder, error) {
	t.Helper()
	ctx := context.Background()
	_, err := c.Do(ctx, "GET", key) // a pooled connection is open
	require.NoError(t, err)
	require.NoError(t, node.Pause())
	defer func() { require.NoError(t, node.Resume()) }()
	rec.reset()
	_, err = c.Do(ctx, args[0].(string), append(args[1:len(args):len(args)], key)...)
	got := rec.snapshot()
	return &got, err
}

// TestReview3HooksWriteTimeoutIsUnknown: a write whose reply did not come
// within the read timeout ends as an *UnknownOutcomeError (it may have
// run); the Command hook's attempt and the operation say unknown_outcome
// as the error does, not timeout, so that a metric of unknown outcomes
// counts it. A read that timed out stays a timeout.
func TestReview3HooksWriteTimeoutIsUnknown(t *testing.T) {
	cases := []struct {
		name string
		args []any
		want shard.Outcome
	}{
		{"write", []any{"INCR"}, shard.OutcomeUnknown},
		{"read", []any{"GET"}, shard.OutcomeTimeout},
	}
	for _, tc := range cases {
		t.Run("ring "+tc.name, func(t *testing.T) {
			servers := redistest.StartNTB(t, 1, redistest.Options{})
			rec := &recorder{}
			cfg := ringConfig(servers)
			cfg.Pool.ReadTimeout = 200 * time.Millisecond
			cfg.Health.Interval = -1
			cfg.Hooks = rec.hooks()
			c := newClient(t, cfg)
			got, err := outcomeOfPausedNode(t, c, rec, servers[0], "r3uo:n", tc.args...)
			checkOutcome(t, err, got, tc.want)
		})
	}
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	for _, tc := range cases {
		t.Run("cluster "+tc.name, func(t *testing.T) {
			rec := &recorder{}
			cfg := clusterConfig(rc.Seeds()...)
			cfg.Pool.ReadTimeout = 300 * time.Millisecond
			cfg.Health.Interval = -1
			cfg.Hooks = rec.hooks()
			c := newClient(t, cfg)
			masters := rc.Masters()
			require.Len(t, masters, 3)
			key, _ := keyOnMaster(t, rc, masters[0], "r3uo-"+tc.name)
			got, err := outcomeOfPausedNode(t, c, rec, masters[0], key, tc.args...)
			checkOutcome(t, err, got, tc.want)
		})
	}
}

func checkOutcome(t *testing.T, err error, got *recorder, want shard.Outcome) {
	t.Helper()
	require.Error(t, err)
	var uo *shard.UnknownOutcomeError
	require.Equal(t, want == shard.OutcomeUnknown, errors.As(err, &uo), "an *UnknownOutcomeError: %v", err)
	require.NotEmpty(t, got.commands)
	assert.Equal(t, want, got.commands[0].Outcome, "the attempt: %v", got.commands[0].Err)
	require.Len(t, got.ops, 1)
	assert.Equal(t, want, got.ops[0].Outcome, "the operation: %v", got.ops[0].Err)
}
