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

// With every ring shard out of the ring no node can carry a channel, and
// no attempt to reach one is made: Subscribe waited for ctx, forever under
// context.Background. It returns at once an error wrapping ErrNoNodes, as
// Ping and Do do; the name stays and is subscribed once a shard is back.
func TestReview3PubSubSubscribeWithNoNodeReturns(t *testing.T) {
	c, servers := startRing(t, 1)
	ctx := context.Background()
	rr := c.Router().(*shard.RingRouter)
	sub, err := c.NewSubscription(shard.SubscriptionOptions{})
	require.NoError(t, err)
	defer sub.Close()
	require.NoError(t, rr.Eject(0))

	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	err = sub.Subscribe(sctx, "r3nn:a")
	require.ErrorIs(t, err, shard.ErrNoNodes)
	assert.NoError(t, sctx.Err(), "returned before its ctx ended")
	assert.Equal(t, 1, sub.Stats().Channels, "the name stays")

	require.NoError(t, rr.Restore(0))
	waitFor(t, 10*time.Second, "the name subscribed once the shard is back", func() bool {
		return numSub(t, servers[0], "NUMSUB", "r3nn:a") == 1
	})
	assert.IsType(t, redis.Subscription{}, receiveWithin(t, sub, 5*time.Second))
}
