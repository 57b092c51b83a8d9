package shard_test

import (
	"context"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview3HooksSentinelRetryIsARetry: on a Sentinel shard a read whose
// master is gone is sent again once the Sentinels name a new master
// (retrySentinel), so the Command hook reports its failed attempt as a
// retry, as in cluster mode, not as a failure that stands: an exporter
// counted a failover's retried reads as failed commands and none as
// retries.
func TestReview3HooksSentinelRetryIsARetry(t *testing.T) {
	set := redistest.StartSentinelsTB(t, sentinelSetOptions(1))
	rec := &recorder{}
	cfg := sentinelConfig(set)
	cfg.Sentinel.FailoverWait = 500 * time.Millisecond
	cfg.Health.Interval = -1
	cfg.DisableAutoPipeline = true
	cfg.Hooks = rec.hooks()
	c := newClient(t, cfg)
	ctx := context.Background()
	_, err := c.Do(ctx, "GET", "r3sent") // a pooled connection is open
	require.NoError(t, err)
	master, err := set.Master(0)
	require.NoError(t, err)
	require.NoError(t, master.Kill())

	rec.reset()
	_, err = c.Do(ctx, "GET", "r3sent")
	t.Logf("GET after the master died: %v", err)
	got := rec.snapshot()
	require.NotEmpty(t, got.commands)
	first := got.commands[0]
	assert.Equal(t, shard.OutcomeRetry, first.Outcome, "the first attempt, sent again: %v", first.Err)
	var retries int64
	for _, n := range c.Stats().Nodes {
		retries += n.Retries
	}
	assert.Positive(t, retries, "the client did send it again")
}
