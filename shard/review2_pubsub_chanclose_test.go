package shard_test

import (
	"sync"
	"testing"
	"time"

	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// Channel called while another goroutine closes the subscription: the
// channel is closed either way, and Close does not panic (the goroutine
// that feeds the channel was added to a WaitGroup Close was waiting on).
func TestReview2PubSubChannelRacesClose(t *testing.T) {
	c, _ := startRing(t, 1)
	for range 200 {
		sub, err := c.NewSubscription(shard.SubscriptionOptions{})
		require.NoError(t, err)
		var wg sync.WaitGroup
		wg.Add(1)
		closed := make(chan struct{})
		go func() {
			defer wg.Done()
			out := sub.Channel()
			for range out {
			}
			close(closed)
		}()
		require.NoError(t, sub.Close())
		select {
		case <-closed:
		case <-time.After(10 * time.Second):
			t.Fatal("Channel was not closed")
		}
		wg.Wait()
	}
}
