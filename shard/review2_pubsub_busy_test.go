package shard_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A node busy with a script answers SUBSCRIBE with BUSY: the name stays
// in the subscription and is subscribed once the script ends, so the
// error is the node's (a *NodeError), not a *SubscribeError, which says
// the names left the subscription.
func TestReview2PubSubBusyNodeKeepsTheName(t *testing.T) {
	c, servers := startRing(t, 1)
	srv := servers[0]
	ctx := context.Background()
	_, err := srv.Do("CONFIG", "SET", "busy-reply-threshold", "20")
	require.NoError(t, err)
	sub, err := c.NewSubscription(shard.SubscriptionOptions{PingInterval: time.Minute, PingTimeout: time.Minute})
	require.NoError(t, err)
	defer sub.Close()
	require.NoError(t, sub.Subscribe(ctx, "r2busy:keep"))
	receiveWithin(t, sub, 5*time.Second)

	script, err := redis.Dial("tcp", srv.Addr)
	require.NoError(t, err)
	defer script.Close()
	ran := make(chan error, 1)
	go func() {
		_, err := script.Do("EVAL", "while true do end", 0)
		ran <- err
	}()
	probe, err := redis.Dial("tcp", srv.Addr)
	require.NoError(t, err)
	defer probe.Close()
	waitFor(t, 10*time.Second, "the script to make the server busy", func() bool {
		_, err := probe.Do("GET", "x")
		var re redis.Error
		return errors.As(err, &re) && strings.HasPrefix(string(re), "BUSY")
	})
	err = sub.Subscribe(ctx, "r2busy:a")
	require.Error(t, err)
	var se *shard.SubscribeError
	assert.False(t, errors.As(err, &se), "a busy node refuses nothing for good: %v", err)
	var ne *shard.NodeError
	assert.True(t, errors.As(err, &ne), "%v", err)
	assert.Equal(t, 2, sub.Stats().Channels, "the name stays")

	_, err = probe.Do("SCRIPT", "KILL")
	require.NoError(t, err)
	select {
	case err := <-ran:
		require.Error(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("the script was not killed")
	}
	waitFor(t, 10*time.Second, "the name subscribed", func() bool {
		n, err := redis.Int(c.Do(ctx, "PUBLISH", "r2busy:a", "x"))
		return err == nil && n == 1
	})
	// What Receive delivered in between: the confirmations, and no error.
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	for {
		v, err := sub.Receive(rctx)
		require.NoError(t, err)
		if m, ok := v.(redis.Message); ok {
			assert.Equal(t, "r2busy:a", m.Channel)
			break
		}
		assert.Equal(t, redis.Subscription{Kind: "subscribe", Channel: "r2busy:a", Count: 2}, v)
	}
}
