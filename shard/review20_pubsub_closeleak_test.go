package shard_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/shard"
)

// TestReview20PubSubCloseRacingReconnectsLeavesNoGoroutine: subscriptions
// closed while their connections are killed and dialled again, and while
// an Unsubscribe and a Subscribe run, leave no goroutine behind.
func TestReview20PubSubCloseRacingReconnectsLeavesNoGoroutine(t *testing.T) {
	c, servers := startRing(t, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// One subscription first, so that the client's own goroutines are up.
	warm, err := c.Subscribe(ctx, "r20leak:warm")
	require.NoError(t, err)
	require.NoError(t, warm.Close())
	before := runtime.NumGoroutine()

	for round := range 20 {
		sub, err := c.NewSubscription(shard.SubscriptionOptions{})
		require.NoError(t, err)
		names := make([]string, 50)
		for i := range names {
			names[i] = fmt.Sprintf("r20leak:%d:%d", round, i)
		}
		require.NoError(t, sub.Subscribe(ctx, names...))
		require.NoError(t, sub.PSubscribe(ctx, "r20leak:*"))
		var wg sync.WaitGroup
		wg.Go(func() {
			for _, s := range servers {
				_, _ = s.Do("CLIENT", "KILL", "TYPE", "pubsub")
			}
		})
		wg.Go(func() {
			cctx, ccancel := context.WithTimeout(ctx, 2*time.Second)
			defer ccancel()
			_ = sub.Unsubscribe(cctx, names[:25]...)
		})
		wg.Go(func() {
			cctx, ccancel := context.WithTimeout(ctx, 2*time.Second)
			defer ccancel()
			_ = sub.Subscribe(cctx, "r20leak:late")
		})
		wg.Go(func() { _ = sub.Channel() })
		if round%2 == 0 {
			time.Sleep(time.Duration(round) * time.Millisecond) // vary where Close lands
		}
		require.NoError(t, sub.Close())
		wg.Wait()
	}
	var after int
	deadline := time.Now().Add(20 * time.Second)
	for {
		after = runtime.NumGoroutine()
		if after <= before || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if after > before {
		buf := make([]byte, 1<<20)
		t.Fatalf("%d goroutines before, %d after:\n%s", before, after, buf[:runtime.Stack(buf, true)])
	}
}
