package shard_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// A Subscribe whose names were all confirmed by the time it looked, but
// whose ctx had ended too, returned the ctx's error about half the time
// (a select between the two): the caller was told the names were still
// being retried while they were subscribed.
func TestReview3PubSubConfirmedBeatsEndedContext(t *testing.T) {
	_, sub, _ := quietSubscription(t, 1)
	defer sub.Close()
	for i := range 20 {
		name := fmt.Sprintf("r3ar:%d", i)
		h := shard.HoldSubscription(sub)
		wait, err := h.SSubscribe(name)
		if err != nil {
			h.Release()
			require.NoError(t, err)
		}
		h.Release()
		waitFor(t, 10*time.Second, "the confirmation", func() bool { return sub.Stats().ShardChannels == i+1 && shard.Review3Waiters(sub) == 0 })
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		require.NoError(t, wait(ctx), "round %d: the names were confirmed", i)
	}
}
