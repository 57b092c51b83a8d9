package shard_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A channel moved to another shard (its old shard ejected) while the old
// shard, busy, had refused its UNSUBSCRIBE: the old shard's connection
// still carries it, to unsubscribe it there later. When that connection
// was lost, the Subscribe waiting for the channel at its new shard was
// failed with the old shard's error, though its own node had not failed.
func TestReview3PubSubLostConnFailsOnlyItsOwnNames(t *testing.T) {
	c, servers := startRing(t, 2)
	ctx := context.Background()
	r, err := ring.New(ringConfig(servers).RingConfig())
	require.NoError(t, err)
	var x, y string
	for i := 0; x == "" || y == ""; i++ {
		if name := fmt.Sprintf("r3lc:%d", i); r.Locate(name) == 0 {
			if x == "" {
				x = name
			} else {
				y = name
			}
		}
	}
	a, b := servers[0], servers[1]
	sub, err := c.NewSubscription(shard.SubscriptionOptions{PingInterval: time.Minute, PingTimeout: time.Minute})
	require.NoError(t, err)
	defer sub.Close()
	require.NoError(t, sub.Subscribe(ctx, x))
	receiveWithin(t, sub, 5*time.Second)

	busyServer(t, a)
	// a refuses both: the SUBSCRIBE of y, the UNSUBSCRIBE of x.
	require.Error(t, sub.Subscribe(ctx, y))
	require.NoError(t, sub.Unsubscribe(ctx, x))
	waitFor(t, 10*time.Second, "the refusals", func() bool { return sub.Stats().ServerErrors >= 2 })
	rr := c.Router().(*shard.RingRouter)
	require.NoError(t, rr.Eject(0))

	// x, wanted again, now belongs to b, which is stopped: it waits.
	require.NoError(t, b.Pause())
	resumed := false
	defer func() {
		if !resumed {
			_ = b.Resume()
		}
	}()
	done := make(chan error, 1)
	sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	go func() { done <- sub.Subscribe(sctx, x) }()
	waitFor(t, 10*time.Second, "x wanted again", func() bool { return sub.Stats().Channels == 2 })
	waitFor(t, 10*time.Second, "the connection to b", func() bool { return shard.Review3Pending(sub, b.Addr) > 0 })

	lost := sub.Stats().Lost
	require.NoError(t, a.Kill())
	waitFor(t, 10*time.Second, "a's connection lost", func() bool { return sub.Stats().Lost > lost })
	select {
	case err := <-done:
		var ne *shard.NodeError
		if errors.As(err, &ne) {
			t.Fatalf("Subscribe of a name placed on %s failed with the error of %s: %v", b.Addr, ne.Node.Addr, err)
		}
		t.Fatalf("Subscribe returned before its node answered: %v", err)
	default:
	}
	require.NoError(t, b.Resume())
	resumed = true
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(15 * time.Second):
		t.Fatal("Subscribe did not return once b answered")
	}
}
