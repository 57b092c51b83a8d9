package shard_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/shard"
)

// TestReview20PubSubIdleUnsubscribeBounded: an Unsubscribe of many long
// names on a connection that awaits no confirmation is bounded like every
// other subscribe and unsubscribe: the confirmations the connection
// awaits stay under the subscription's limit, so a node whose pubsub
// output limit is above that bound keeps the connection, and the name
// left on it goes on delivering without a gap.
func TestReview20PubSubIdleUnsubscribeBounded(t *testing.T) {
	const n, nameLen, limit = 4096, 4000, 256 << 10
	c, servers := startRing(t, 1)
	srv := servers[0]
	_, err := srv.Do("CONFIG", "SET", "client-output-buffer-limit", "pubsub 2mb 2mb 0")
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sub, err := c.NewSubscription(shard.SubscriptionOptions{BufferSize: 1 << 16})
	require.NoError(t, err)
	defer sub.Close()
	shard.SetAwaitedRepliesLimit(sub, limit)

	names := make([]string, n)
	pad := strings.Repeat("x", nameLen)
	for i := range names {
		names[i] = fmt.Sprintf("r20idle:%05d:%s", i, pad)
	}
	require.NoError(t, sub.Subscribe(ctx, "r20idle:keep"))
	require.NoError(t, sub.Subscribe(ctx, names...))
	require.Zero(t, sub.Stats().Lost, "lost while subscribing")
	waitFor(t, 30*time.Second, "every subscribe confirmed", func() bool { return pubsubChannels(t, srv) == n+1 })

	most := sampleMost(t, func() int { return shard.AwaitedUnsubscribes(sub) })
	require.NoError(t, sub.Unsubscribe(ctx, names...))
	// Every confirmation comes, then the one channel left delivers.
	got := 0
	for got < n {
		v, err := sub.Receive(ctx)
		require.NoError(t, err, "%d of %d confirmations, %+v", got, n, sub.Stats())
		if s, ok := v.(redis.Subscription); ok && s.Kind == "unsubscribe" {
			got++
		}
	}
	t.Logf("%+v, most awaited %d", sub.Stats(), most.Load())
	assert.Zero(t, sub.Stats().Lost, "the node closed the connection")
	assert.LessOrEqual(t, most.Load(), int64(limit+nameLen+100), "unsubscribe confirmations awaited beyond the limit")
	assert.Equal(t, 1, pubsubChannels(t, srv))
	assert.Zero(t, sub.Stats().Resubscribed, "the channel kept was subscribed again")
}
