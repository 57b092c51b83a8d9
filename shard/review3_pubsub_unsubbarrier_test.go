package shard_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A ring pattern lives on every shard, and PUnsubscribe delivers one
// punsubscribe for it. That confirmation came with the first connection's
// (in map order), while another shard could still deliver the pattern's
// messages: the application got messages of a pattern after being told it
// was unsubscribed. It now comes once every shard has confirmed, after
// the last message any of them delivered. Each round stops one shard, so
// that the other confirms first; which connection the old code took the
// confirmation from was random, so several rounds are run.
func TestReview3PubSubPatternUnsubscribeConfirmedLast(t *testing.T) {
	_, sub, servers := quietSubscription(t, 2)
	defer sub.Close()
	for round := range 6 {
		review3PatternRound(t, sub, servers[round%2], servers[1-round%2], round)
	}
}

// review3PatternRound runs one round of
// TestReview3PubSubPatternUnsubscribeConfirmedLast.
func review3PatternRound(t *testing.T, sub *shard.Subscription, stopped, other *redistest.Server, round int) {
	ctx := context.Background()
	pattern := fmt.Sprintf("r3ub%d:*", round)
	channel := fmt.Sprintf("r3ub%d:x", round)
	require.NoError(t, sub.PSubscribe(ctx, pattern))
	require.Equal(t, redis.Subscription{Kind: "psubscribe", Channel: pattern, Count: 1}, receiveWithin(t, sub, 5*time.Second))

	// stopped reads a PUBLISH and then the PUNSUBSCRIBE when it resumes,
	// in the order they arrived.
	pub, err := redis.Dial("tcp", stopped.Addr)
	require.NoError(t, err)
	defer pub.Close()
	_, err = pub.Do("PING") // accepted before the server stops
	require.NoError(t, err)
	require.NoError(t, stopped.Pause())
	resumed := false
	defer func() {
		if !resumed {
			_ = stopped.Resume()
		}
	}()
	require.NoError(t, pub.Send("PUBLISH", channel, "late"))
	require.NoError(t, pub.Flush())
	require.NoError(t, sub.PUnsubscribe(ctx, pattern))
	waitFor(t, 10*time.Second, "the other shard's confirmation handled", func() bool {
		return shard.Review3Pending(sub, other.Addr) <= 0
	})
	require.NoError(t, stopped.Resume())
	resumed = true
	n, err := redis.Int(pub.Receive())
	require.NoError(t, err)
	require.Equal(t, 1, n, "the stopped shard delivered the message before it took the PUNSUBSCRIBE")

	// The message, then the confirmation.
	require.Equal(t, redis.Message{Pattern: pattern, Channel: channel, Data: []byte("late")}, receiveWithin(t, sub, 5*time.Second), "round %d", round)
	require.Equal(t, redis.Subscription{Kind: "punsubscribe", Channel: pattern, Count: 0}, receiveWithin(t, sub, 5*time.Second), "round %d", round)
}

// The connection that carried an unsubscribed name is lost before the
// node confirms: the server dropped the name with it, and the
// confirmation is delivered all the same instead of never.
func TestReview3PubSubUnsubscribeConfirmedWhenConnLost(t *testing.T) {
	_, sub, servers := quietSubscription(t, 1)
	srv := servers[0]
	ctx := context.Background()
	defer sub.Close()
	require.NoError(t, sub.Subscribe(ctx, "r3ul:a", "r3ul:b"))
	for range 2 {
		receiveWithin(t, sub, 5*time.Second)
	}
	require.NoError(t, srv.Pause())
	require.NoError(t, sub.Unsubscribe(ctx, "r3ul:a"))
	require.Equal(t, 1, shard.Review3Pending(sub, srv.Addr), "the UNSUBSCRIBE waits for its answer")
	require.NoError(t, srv.Kill())
	assert.Equal(t, redis.Subscription{Kind: "unsubscribe", Channel: "r3ul:a", Count: 1}, receiveWithin(t, sub, 5*time.Second))
	assert.Equal(t, 1, sub.Stats().Channels)
}
