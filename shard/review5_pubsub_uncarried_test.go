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

// A name that no connection carries when it is unsubscribed (its node is
// down, or it was never subscribed) got no confirmation at all, unlike a
// redis-server, which confirms every name of an UNSUBSCRIBE. The redigo
// idiom "unsubscribe, then Receive until a Subscription with Count 0"
// waited forever. It is confirmed at once.
func TestReview5PubSubUnsubscribeOfUncarriedNameIsConfirmed(t *testing.T) {
	c, servers := startRing(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sub, err := c.NewSubscription(shard.SubscriptionOptions{})
	require.NoError(t, err)
	defer sub.Close()
	require.NoError(t, sub.Subscribe(ctx, "r5u:a"))
	assert.Equal(t, redis.Subscription{Kind: "subscribe", Channel: "r5u:a", Count: 1}, receiveWithin(t, sub, 5*time.Second))

	// Never subscribed: a server confirms it all the same.
	require.NoError(t, sub.Unsubscribe(ctx, "r5u:never"))
	assert.Equal(t, redis.Subscription{Kind: "unsubscribe", Channel: "r5u:never", Count: 1}, receiveWithin(t, sub, 5*time.Second))

	// Its node down: the name stays wanted but no connection carries it.
	require.NoError(t, servers[0].Kill())
	waitFor(t, 10*time.Second, "the connection lost", func() bool { return sub.Stats().Connections == 0 })
	require.NoError(t, sub.Unsubscribe(ctx))
	assert.Equal(t, redis.Subscription{Kind: "unsubscribe", Channel: "r5u:a", Count: 0}, receiveWithin(t, sub, 5*time.Second))
	assert.Equal(t, 0, sub.Stats().Channels)

	// Nothing left of the kind: one confirmation with no name and the
	// count, as a server gives.
	require.NoError(t, sub.PUnsubscribe(ctx))
	assert.Equal(t, redis.Subscription{Kind: "punsubscribe", Channel: "", Count: 0}, receiveWithin(t, sub, 5*time.Second))
}
