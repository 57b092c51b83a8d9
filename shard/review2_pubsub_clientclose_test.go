package shard_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Subscriptions made while the client closes: each is either refused
// with ErrClosed or made and then closed by the client; none panics.
func TestReview2PubSubNewSubscriptionRacesClientClose(t *testing.T) {
	servers := redistest.StartNTB(t, 1, redistest.Options{})
	cfg := ringConfig(servers)
	cfg.Health.Interval = -1
	for range 100 {
		c, err := shard.New(context.Background(), cfg)
		require.NoError(t, err)
		var wg sync.WaitGroup
		var made []*shard.Subscription
		var other error
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				sub, err := c.NewSubscription(shard.SubscriptionOptions{})
				if errors.Is(err, shard.ErrClosed) {
					return
				}
				if err != nil {
					other = err
					return
				}
				made = append(made, sub)
			}
		}()
		require.NoError(t, c.Close())
		wg.Wait()
		require.NoError(t, other)
		for _, sub := range made {
			_, err := sub.Receive(context.Background())
			assert.ErrorIs(t, err, shard.ErrSubscriptionClosed)
		}
	}
}
