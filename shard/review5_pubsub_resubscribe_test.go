package shard_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Subscribe of a name the subscription already has returned nil at once,
// even while no node carried the name (its shard down): the caller was
// told that a message published afterwards is delivered, and it was not.
// It now waits, as for a new name, and fails with the node's error.
func TestReview5PubSubSubscribeAgainWhileItsNodeIsDown(t *testing.T) {
	c, servers := startRing(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sub, err := c.Subscribe(ctx, "r5a:a")
	require.NoError(t, err)
	defer sub.Close()
	assert.Equal(t, redis.Subscription{Kind: "subscribe", Channel: "r5a:a", Count: 1}, receiveWithin(t, sub, 5*time.Second))

	require.NoError(t, servers[0].Kill())
	waitFor(t, 10*time.Second, "the connection lost", func() bool { return sub.Stats().Connections == 0 })
	err = sub.Subscribe(ctx, "r5a:a")
	var ne *shard.NodeError
	require.True(t, errors.As(err, &ne), "Subscribe of a name no node carries: %v", err)
	assert.Equal(t, servers[0].Addr, ne.Node.Addr)
	assert.Equal(t, 1, sub.Stats().Channels, "the name stays")

	require.NoError(t, servers[0].Restart())
	// Returns once the name is subscribed again: a message published
	// afterwards is delivered.
	waitFor(t, 10*time.Second, "Subscribe to succeed", func() bool { return sub.Subscribe(ctx, "r5a:a") == nil })
	n, err := redis.Int(c.Do(ctx, "PUBLISH", "r5a:a", "m"))
	require.NoError(t, err)
	assert.Equal(t, 1, n, "subscribed when Subscribe returned")
	// No second confirmation of the name: it never left the subscription.
	assert.Equal(t, redis.Message{Channel: "r5a:a", Data: []byte("m")}, receiveWithin(t, sub, 5*time.Second))
}
