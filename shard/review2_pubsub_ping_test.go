package shard_test

import (
	"context"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A Ping sent right after the last name of a connection was unsubscribed
// reaches a server that has left subscribe mode: it answers PING with a
// bare bulk string, not a pong push. That is still the pong asked for, not
// a broken stream; and the connection, which carries nothing any more, is
// closed once both are answered.
func TestReview2PubSubPingAfterLastUnsubscribe(t *testing.T) {
	c, servers := startRing(t, 1)
	ctx := context.Background()
	sub, err := c.Subscribe(ctx, "r2ping:a")
	require.NoError(t, err)
	defer sub.Close()
	assert.Equal(t, redis.Subscription{Kind: "subscribe", Channel: "r2ping:a", Count: 1}, receiveWithin(t, sub, 5*time.Second))

	// Paused, the server reads both commands only after both were sent,
	// so the connection is still open when Ping is called.
	require.NoError(t, servers[0].Pause())
	resumed := false
	defer func() {
		if !resumed {
			_ = servers[0].Resume()
		}
	}()
	require.NoError(t, sub.Unsubscribe(ctx, "r2ping:a"))
	require.NoError(t, sub.Ping(ctx, "hello"))
	require.NoError(t, servers[0].Resume())
	resumed = true
	assert.Equal(t, redis.Subscription{Kind: "unsubscribe", Channel: "r2ping:a", Count: 0}, receiveWithin(t, sub, 5*time.Second))
	assert.Equal(t, redis.Pong{Data: "hello"}, receiveWithin(t, sub, 5*time.Second))
	assert.Zero(t, sub.Stats().Lost, "the connection was not taken for broken")
	waitFor(t, 5*time.Second, "the idle connection closed", func() bool { return sub.Stats().Connections == 0 })
}
