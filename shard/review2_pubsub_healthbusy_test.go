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

// The subscription's own health PINGs are not the application's: when a
// busy node answers them with BUSY, Receive delivers no error for them,
// and the connection, which did answer, is kept.
func TestReview2PubSubHealthPingRefusalIsNotDelivered(t *testing.T) {
	c, servers := startRing(t, 1)
	ctx := context.Background()
	sub, err := c.NewSubscription(shard.SubscriptionOptions{PingInterval: 50 * time.Millisecond, PingTimeout: 5 * time.Second})
	require.NoError(t, err)
	defer sub.Close()
	require.NoError(t, sub.Subscribe(ctx, "r2hb:a"))
	receiveWithin(t, sub, 5*time.Second)
	end := busyServer(t, servers[0])
	waitFor(t, 10*time.Second, "health PINGs refused", func() bool { return sub.Stats().ServerErrors >= 2 })
	end()
	n, err := redis.Int(c.Do(ctx, "PUBLISH", "r2hb:a", "x"))
	require.NoError(t, err)
	require.Equal(t, 1, n)
	assert.Equal(t, redis.Message{Channel: "r2hb:a", Data: []byte("x")}, receiveWithin(t, sub, 5*time.Second))
	assert.Zero(t, sub.Stats().Lost)
}
