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
	// The client's own health checks may have marked the node down while
	// it was busy: its Do refuses the node until they see it answer.
	waitFor(t, 10*time.Second, "a PUBLISH that reaches the subscription", func() bool {
		n, err := redis.Int(c.Do(ctx, "PUBLISH", "r2hb:a", "x"))
		return err == nil && n == 1
	})
	assert.Equal(t, redis.Message{Channel: "r2hb:a", Data: []byte("x")}, receiveWithin(t, sub, 5*time.Second))
	assert.Zero(t, sub.Stats().Lost)
}
