package shard_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// TestSubscriptionUnsubscribeAgainWhilePending: an Unsubscribe of many
// names whose unsubscribes are still awaited (an Unsubscribe of them
// just before) does not cost the square of their number under the lock.
func TestSubscriptionUnsubscribeAgainWhilePending(t *testing.T) {
	n := 60_000
	servers := redistest.StartNTB(t, 1, redistest.Options{})
	c, err := shard.New(context.Background(), ringConfig(servers))
	require.NoError(t, err)
	defer c.Close()
	ctx := context.Background()
	sub, err := c.NewSubscription(shard.SubscriptionOptions{})
	require.NoError(t, err)
	defer sub.Close()
	names := bigNames(n)
	require.NoError(t, sub.Subscribe(ctx, names...))
	require.NoError(t, sub.Unsubscribe(ctx, names...))
	start := time.Now()
	require.NoError(t, sub.Unsubscribe(ctx, names...))
	again := time.Since(start)
	t.Logf("the second Unsubscribe of %d names took %v", n, again)
	waitFor(t, 60*time.Second, "no channel left on the server", func() bool {
		return pubsubChannels(t, servers[0]) == 0
	})
	require.Zero(t, sub.Stats().Lost)
	require.Less(t, again, 2*time.Second)
}
