package shard_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview8PubSubHeldMessagesAreBuffered: the messages a new connection
// holds back while their channel moves (until the old node lets it go)
// are waiting for the application, but Buffered and Stats().Buffered did
// not count them: a program watching its backlog saw none.
func TestReview8PubSubHeldMessagesAreBuffered(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// Long pings: the old node, paused, is not taken for dead while the
	// test looks; the hold ends when it is resumed and lets the channel go.
	h := startHeldMove(t)
	sub := h.sub
	defer sub.Close()
	const moving = "y2020:held"
	require.NoError(t, sub.Subscribe(ctx, moving))

	reached := h.holdOnTheNewNode(ctx, t, moving)
	deadline := time.Now().Add(10 * time.Second)
	for sub.Buffered() < len(reached) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	require.Equal(t, len(reached), sub.Buffered(), "messages held back while the channel moves are waiting for the application")
	require.Equal(t, len(reached), sub.Stats().Buffered)

	require.NoError(t, h.resume())
	var got []int
	for len(got) < len(reached) {
		v, err := sub.Receive(ctx)
		require.NoError(t, err, "got %v of %v", got, reached)
		if m, ok := v.(redis.Message); ok {
			i, err := strconv.Atoi(string(m.Data))
			require.NoError(t, err)
			got = append(got, i)
		}
	}
	assert.Equal(t, reached, got)
	assert.Zero(t, sub.Buffered())
}
