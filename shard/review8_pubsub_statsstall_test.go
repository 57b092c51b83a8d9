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

// A Ping (or the placement loop) writing to a node that does not read
// (stopped, its socket buffers full) holds the subscription's lock until
// the write's deadline. Stats, which has no ctx, took that lock to count
// the names and connections: a monitoring goroutine calling it hung for
// the whole WriteTimeout. It must answer at once; so must the first call
// of Channel, which took the lock to start its goroutine.
func TestReview8PubSubStatsAndChannelAnswerBehindAStalledWrite(t *testing.T) {
	const writeTimeout = 40 * time.Second
	sub, server := longWriteSubscription(t, writeTimeout)
	defer sub.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	require.NoError(t, sub.Subscribe(ctx, "r8st:a", "r8st:b"))
	require.NoError(t, sub.PSubscribe(ctx, "r8st:*"))

	pauseUntilCleanup(t, server)
	// Far more than the socket buffers of both ends hold.
	pinged := make(chan error, 1)
	go func() { pinged <- sub.Ping(context.Background(), strings.Repeat("x", 32<<20)) }()
	// The lock is held once a call with a short ctx gives up on it.
	waitFor(t, 10*time.Second, "the Ping's write to stall under the lock", func() bool {
		sctx, scancel := context.WithTimeout(ctx, 20*time.Millisecond)
		defer scancel()
		err := sub.Unsubscribe(sctx, "r8st:never")
		return errors.Is(err, context.DeadlineExceeded)
	})

	got := make(chan shard.SubscriptionStats, 1)
	start := time.Now()
	go func() { got <- sub.Stats() }()
	select {
	case st := <-got:
		assert.Less(t, time.Since(start), 2*time.Second)
		assert.Equal(t, 2, st.Channels)
		assert.Equal(t, 1, st.Patterns)
		assert.Equal(t, 1, st.Connections)
	case <-time.After(writeTimeout / 4):
		t.Errorf("Stats still waiting after %v, behind the stalled write", writeTimeout/4)
	}
	// Channel has no ctx either: its first call starts the goroutine that
	// feeds the channel.
	chDone := make(chan (<-chan redis.Message), 1)
	start = time.Now()
	go func() { chDone <- sub.Channel() }()
	select {
	case ch := <-chDone:
		assert.NotNil(t, ch)
		assert.Less(t, time.Since(start), 2*time.Second)
	case <-time.After(writeTimeout / 4):
		t.Errorf("Channel still waiting after %v, behind the stalled write", writeTimeout/4)
	}
	sub.Close()
	select {
	case err := <-pinged:
		assert.Error(t, err, "the write ended by Close")
	case <-time.After(writeTimeout):
		t.Fatal("the Ping did not end")
	}
}
