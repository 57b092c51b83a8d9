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

// An Unsubscribe of a channel while it moves to another node (the old
// node, paused, has not let it go; the new one holds its messages back):
// the messages the new node delivered before the unsubscribe come, in
// order, then one confirmation, and nothing of the channel after it. It
// holds today; the test guards it.
func TestReview10PubSubUnsubscribeWhileTheChannelMoves(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	h := startHeldMove(t)
	c, sub := h.c, h.sub
	defer sub.Close()
	const moving = "y2020:unsub"
	require.NoError(t, sub.Subscribe(ctx, moving))
	v, err := sub.Receive(ctx)
	require.NoError(t, err)
	require.Equal(t, redis.Subscription{Kind: "subscribe", Channel: moving, Count: 1}, v)

	reached := h.holdOnTheNewNode(ctx, t, moving)
	waitFor(t, 10*time.Second, "the messages held", func() bool { return sub.Buffered() == len(reached) })

	require.NoError(t, sub.Unsubscribe(ctx, moving))
	// Gone from the new node: what is published now reaches nobody.
	waitFor(t, 10*time.Second, "the channel off the new node", func() bool {
		n, err := redis.Int(c.Do(ctx, "PUBLISH", moving, "after"))
		return err == nil && n == 0
	})
	require.NoError(t, h.resume())

	var got []any
	for {
		rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
		v, err := sub.Receive(rctx)
		rcancel()
		require.NoError(t, err, "got %v", got)
		if m, ok := v.(redis.Message); ok {
			got = append(got, string(m.Data))
			continue
		}
		got = append(got, v)
		if _, ok := v.(redis.Subscription); ok {
			break
		}
	}
	want := []any{}
	for _, seq := range reached {
		want = append(want, strconv.Itoa(seq))
	}
	want = append(want, redis.Subscription{Kind: "unsubscribe", Channel: moving, Count: 0})
	assert.Equal(t, want, got)
	assert.Zero(t, sub.Buffered())
	// Nothing is carried any more: both connections close.
	waitFor(t, 10*time.Second, "the connections closed", func() bool { return sub.Stats().Connections == 0 })
	rctx, rcancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer rcancel()
	v, err = sub.Receive(rctx)
	assert.ErrorIs(t, err, context.DeadlineExceeded, "nothing after the confirmation: %v", v)
}
