package shard_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// With auto-eject and every ring shard down (so ejected), a channel has no
// shard to go to and Subscribe returns at once an error wrapping
// ErrNoNodes; it said only that, hiding that the shards were down and
// why (a refused dial), which the client's health checks knew. It now
// wraps each down shard's failure as a *NodeError matching ErrNodeDown, as
// in cluster mode when no master is left.
func TestReview7PubSubRingAllDownKeepsTheCauses(t *testing.T) {
	c, addrs := allEjectedRing(t)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, tc := range []struct {
		name      string
		subscribe func(*shard.Subscription) error
	}{
		{"channel", func(s *shard.Subscription) error { return s.Subscribe(ctx, "r7rd:a") }},
		{"shard channel", func(s *shard.Subscription) error { return s.SSubscribe(ctx, "r7rd:b") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sub, err := c.NewSubscription(shard.SubscriptionOptions{})
			require.NoError(t, err)
			defer sub.Close()
			err = tc.subscribe(sub)
			require.Error(t, err)
			assert.ErrorIs(t, err, shard.ErrNoNodes)
			assert.ErrorIs(t, err, shard.ErrNodeDown, "says the shards are down: %v", err)
			assert.NoError(t, ctx.Err(), "returned before its ctx ended")
			var ne *shard.NodeError
			if assert.True(t, errors.As(err, &ne), "a shard's failure is wrapped: %v", err) {
				assert.True(t, addrs[ne.Node.Addr], "%v", ne.Node)
			}
		})
	}
	// Client.Subscribe closes the subscription on error, with the same cause.
	_, err := c.Subscribe(ctx, "r7rd:c")
	assert.ErrorIs(t, err, shard.ErrNoNodes)
	assert.ErrorIs(t, err, shard.ErrNodeDown)
}
