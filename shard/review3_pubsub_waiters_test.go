package shard_test

import (
	"context"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A Subscribe whose ctx ends before its node confirms returns, and the
// name stays; but the call must not stay registered as waiting: a caller
// that retries Subscribe with a short timeout while the node hangs left
// one waiter per call behind, a leak without bound for as long as the
// node did not answer.
func TestReview3PubSubAbandonedSubscribeLeavesNoWaiter(t *testing.T) {
	c, sub, servers := quietSubscription(t, 1)
	srv := servers[0]
	ctx := context.Background()
	defer sub.Close()
	require.NoError(t, sub.Subscribe(ctx, "r3w:keep"))
	receiveWithin(t, sub, 5*time.Second)

	require.NoError(t, srv.Pause())
	resumed := false
	defer func() {
		if !resumed {
			_ = srv.Resume()
		}
	}()
	const calls = 50
	for range calls {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Millisecond)
		err := sub.Subscribe(cctx, "r3w:new")
		cancel()
		require.ErrorIs(t, err, context.DeadlineExceeded)
	}
	assert.Zero(t, shard.Review3Waiters(sub), "calls that returned are no longer waiting")
	assert.Equal(t, 2, sub.Stats().Channels, "the name stays in the subscription")

	require.NoError(t, srv.Resume())
	resumed = true
	waitFor(t, 10*time.Second, "the name subscribed once the node answers", func() bool {
		n, err := redis.Int(c.Do(ctx, "PUBLISH", "r3w:new", "x"))
		return err == nil && n == 1
	})
	// One confirmation for the name, then its message.
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	v, err := sub.Receive(rctx)
	require.NoError(t, err)
	assert.Equal(t, redis.Subscription{Kind: "subscribe", Channel: "r3w:new", Count: 2}, v)
	for {
		v, err := sub.Receive(rctx)
		require.NoError(t, err)
		m, ok := v.(redis.Message)
		require.True(t, ok, "%#v", v)
		if string(m.Data) == "x" {
			break
		}
	}
	assert.Zero(t, shard.Review3Waiters(sub))
}
