package shard_test

import (
	"context"
	"testing"

	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// A Ping on a subscription with no connection open has nothing to answer
// it: it says so, rather than leave the caller waiting for a pong.
func TestReview2PubSubPingWithoutConnection(t *testing.T) {
	c, _ := startRing(t, 1)
	ctx := context.Background()
	sub, err := c.NewSubscription(shard.SubscriptionOptions{})
	require.NoError(t, err)
	defer sub.Close()
	err = sub.Ping(ctx, "hello")
	require.ErrorIs(t, err, shard.ErrNoNodes)
}
