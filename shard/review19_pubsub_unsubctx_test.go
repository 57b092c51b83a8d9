package shard_test

import (
	"context"
	"errors"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview19PubSubUnsubscribeHonoursContext: an Unsubscribe of many
// names that waits for room among the confirmations awaited (the node
// paused, it answers nothing) returns when its ctx ends, with an error
// matching the ctx's, not when the connection is given up. The rest of
// the names are unsubscribed in the background once the node answers;
// the subscription goes on working and leaves no goroutine behind.
func TestReview19PubSubUnsubscribeHonoursContext(t *testing.T) {
	const n = 20_000
	c, servers := startRing(t, 1)
	base := runtime.NumGoroutine()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Health PINGs rare: the paused node's connection is not given up
	// during the test.
	sub, names := bigSubscription(ctx, t, c, "r19ctx:channel:%08d", n)

	// Paused for long enough that both calls below end before it does;
	// a paused server answers no other client, CLIENT UNPAUSE included.
	const pause = 20 * time.Second
	_, err := servers[0].Do("CLIENT", "PAUSE", strconv.Itoa(int(pause/time.Millisecond)), "ALL")
	require.NoError(t, err)
	paused := time.Now()

	for _, tc := range []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
		want error
	}{
		{"deadline", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(ctx, 300*time.Millisecond)
		}, context.DeadlineExceeded},
		{"cancel", func() (context.Context, context.CancelFunc) {
			cctx, ccancel := context.WithCancel(ctx)
			time.AfterFunc(300*time.Millisecond, ccancel)
			return cctx, ccancel
		}, context.Canceled},
	} {
		cctx, ccancel := tc.ctx()
		start := time.Now()
		part := names[:n/2]
		if tc.want == context.Canceled {
			part = names[n/2:]
		}
		err := sub.Unsubscribe(cctx, part...)
		took := time.Since(start)
		ccancel()
		t.Logf("%s: Unsubscribe returned after %v: %v", tc.name, took, err)
		require.Error(t, err, tc.name)
		assert.True(t, errors.Is(err, tc.want), "%s: %v", tc.name, err)
		assert.Less(t, took, pause/4, "%s: the Unsubscribe outlived its ctx", tc.name)
	}
	require.Less(t, time.Since(paused), pause, "the node's pause ended before the calls did: the machine is too slow")
	// A name whose unsubscribe was left to the background, subscribed
	// again before it was sent: it is subscribed, and confirmed.
	again := names[n-1]
	resub := make(chan error, 1)
	go func() {
		rctx, rcancel := context.WithTimeout(ctx, 2*pause)
		defer rcancel()
		resub <- sub.Subscribe(rctx, again)
	}()

	// The node answers again once its pause ends.
	waitFor(t, 2*pause, "the node's pause over", func() bool {
		_, err := servers[0].Do("PING")
		return err == nil
	})
	require.NoError(t, <-resub, "Subscribe of %s again", again)
	// The other names all leave the node; "keep" and the name subscribed
	// again stay and deliver, and new calls work.
	waitFor(t, time.Minute, "only keep and one name left on the node", func() bool { return pubsubChannels(t, servers[0]) == 2 })
	require.NoError(t, sub.Subscribe(ctx, "after"))
	for _, ch := range []string{"keep", "after", again} {
		_, err := c.Do(ctx, "PUBLISH", ch, "x")
		require.NoError(t, err)
	}
	got := map[string]bool{}
	for len(got) < 3 {
		v, err := sub.Receive(ctx)
		require.NoError(t, err)
		if m, ok := v.(redis.Message); ok {
			if m.Channel != again {
				assert.NotContains(t, m.Channel, "r19ctx:", "a message of an unsubscribed name")
			}
			got[m.Channel] = true
		}
	}
	require.NoError(t, sub.Unsubscribe(ctx, "after"))
	waitFor(t, 30*time.Second, "after left the node", func() bool { return pubsubChannels(t, servers[0]) == 2 })
	assert.Zero(t, sub.Stats().Lost)

	require.NoError(t, sub.Close())
	requireGoroutinesBackTo(t, base)
}
