package shard_test

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A node whose health checks timed out (a hung server) is marked down,
// and its commands fail fast with ErrNodeDown and the failure that keeps
// it down. That failure is the health check's own timeout, not the
// caller's: the error must not match context.DeadlineExceeded, which
// says that the caller's context ended (a caller without any deadline
// was told its deadline passed, and the client's own retry rules, which
// stop at once on the caller's ended context, gave up). It still reads
// as a timeout (net.Error).
func TestReview21HealthTimeoutIsNotTheCallersDeadline(t *testing.T) {
	server := redistest.StartTB(t, redistest.Options{})
	cfg := ringConfig([]*redistest.Server{server})
	cfg.Health.Timeout = 100 * time.Millisecond
	downs := make(chan shard.NodeEvent, 16)
	cfg.Hooks = &shard.Hooks{NodeState: func(ev shard.NodeEvent) {
		if ev.Kind == shard.NodeDown {
			select {
			case downs <- ev:
			default:
			}
		}
	}}
	c := newClient(t, cfg)
	ctx := context.Background()
	_, err := c.Do(ctx, "SET", "r21ht", "1")
	require.NoError(t, err)
	pauseUntilCleanup(t, server)

	var ev shard.NodeEvent
	select {
	case ev = <-downs:
	case <-time.After(30 * time.Second):
		t.Fatal("the hung node was not marked down")
	}
	assert.False(t, errors.Is(ev.Err, context.DeadlineExceeded), "NodeDown's Err %v matches context.DeadlineExceeded", ev.Err)

	_, err = c.Do(ctx, "GET", "r21ht")
	require.Error(t, err)
	assert.ErrorIs(t, err, shard.ErrNodeDown)
	assert.False(t, errors.Is(err, context.DeadlineExceeded), "a call without a deadline got %v, matching context.DeadlineExceeded", err)
	assert.False(t, errors.Is(err, context.Canceled), "%v", err)
	var ne net.Error
	if assert.ErrorAs(t, err, &ne, "the failure that keeps the node down is a timeout: %v", err) {
		assert.True(t, ne.Timeout(), "%v", err)
	}
}
