package shard_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"go.uber.org/goleak"
)

// Close racing the other calls: each returns nil or ErrSubscriptionClosed
// (Ping may also find no connection: ErrNoNodes), none hangs, and nothing
// is left behind. Since Close closes the connections before it takes the
// subscription's lock, an Unsubscribe or Ping writing under the lock at
// that moment met a closed connection and returned a *NodeError
// ("connection closed") instead of ErrSubscriptionClosed.
func TestReview5PubSubCloseRacingTheOtherCalls(t *testing.T) {
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	cfg := ringConfig(servers)
	cfg.Pool.ClientName = "r5race"
	c, err := shard.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for round := range 20 {
		sub, err := c.NewSubscription(shard.SubscriptionOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for g := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ; i++ {
					name := fmt.Sprintf("r5r:%d:%d", g, i%7)
					var err error
					switch g % 4 {
					case 0:
						err = sub.Subscribe(ctx, name)
					case 1:
						if err = sub.PSubscribe(ctx, name+"*"); err == nil {
							err = sub.PUnsubscribe(ctx, name+"*")
						}
					case 2:
						_, err = sub.Receive(ctx)
					case 3:
						if err = sub.Ping(ctx, "p"); errors.Is(err, shard.ErrNoNodes) {
							err = nil
						}
					}
					if errors.Is(err, shard.ErrSubscriptionClosed) {
						return
					}
					if err != nil {
						errs <- fmt.Errorf("round %d, goroutine %d: %w", round, g, err)
						return
					}
				}
			}()
		}
		_ = sub.Channel()
		waitFor(t, 10*time.Second, "some names subscribed", func() bool { return sub.Stats().Channels > 2 })
		sub.Close()
		wg.Wait()
		cancel()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	}
	waitFor(t, 5*time.Second, "every subscription connection closed", func() bool {
		return subscribersNamed(t, servers, "r5race") == 0
	})
}
