package shard_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Several goroutines subscribe and unsubscribe names (each its own
// names), giving up on each call almost at once so that commands overlap
// on the connections. Once things settle, each shard has exactly the
// names whose last call was a subscribe, and the last confirmation the
// application received for each name says the same.
func TestReview2PubSubConcurrentOverlappingCalls(t *testing.T) {
	c, servers := startRing(t, 3)
	r, err := ring.New(ringConfig(servers).RingConfig())
	require.NoError(t, err)
	ctx := context.Background()
	sub, err := c.NewSubscription(shard.SubscriptionOptions{})
	require.NoError(t, err)
	defer sub.Close()
	// Keeps one connection per shard open throughout.
	require.NoError(t, sub.PSubscribe(ctx, "r2conc:keep:*"))

	const workers, perWorker = 4, 8
	finals := make([]map[string]bool, workers)
	var wg sync.WaitGroup
	for w := range workers {
		finals[w] = map[string]bool{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 300 {
				name := fmt.Sprintf("r2conc:%d:%d", w, rand.IntN(perWorker))
				subscribe := rand.IntN(2) == 0
				cctx, cancel := context.WithTimeout(ctx, time.Duration(rand.IntN(3))*time.Millisecond)
				var err error
				if subscribe {
					err = sub.Subscribe(cctx, name)
				} else {
					err = sub.Unsubscribe(cctx, name)
				}
				cancel()
				// A context already ended when the call began: the call
				// did nothing. (One that ends while Subscribe waits
				// leaves the name subscribed: its error says so.)
				if errors.Is(err, context.DeadlineExceeded) && !strings.Contains(err.Error(), "stay subscribed") {
					continue
				}
				finals[w][name] = subscribe
			}
		}()
	}
	events := map[string]string{}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	// Drain while the workers run, so that nothing is dropped.
	drain := func(until <-chan struct{}) {
		for {
			select {
			case <-until:
				return
			default:
			}
			rctx, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
			v, err := sub.Receive(rctx)
			cancel()
			if err != nil {
				continue
			}
			if s, ok := v.(redis.Subscription); ok {
				events[s.Channel] = s.Kind
			}
		}
	}
	drain(done)

	final := map[string]bool{}
	for _, f := range finals {
		for k, v := range f {
			final[k] = v
		}
	}
	check := func() error {
		for name, on := range final {
			for si, s := range servers {
				exp := 0
				if on && r.Locate(name) == si {
					exp = 1
				}
				if got := numSub(t, s, "NUMSUB", name); got != exp {
					return fmt.Errorf("%s on shard %d: %d subscribers, want %d", name, si, got, exp)
				}
			}
		}
		return nil
	}
	var last error
	deadline := time.Now().Add(15 * time.Second)
	for last = check(); last != nil && time.Now().Before(deadline); last = check() {
		time.Sleep(20 * time.Millisecond)
	}
	require.NoError(t, last)

	// Every reply sent before the PING is read before its pong.
	require.Equal(t, 3, sub.Stats().Connections)
	require.NoError(t, sub.Ping(ctx, "end"))
	for pongs := 0; pongs < 3; {
		v := receiveWithin(t, sub, 5*time.Second)
		switch m := v.(type) {
		case redis.Pong:
			pongs++
		case redis.Subscription:
			events[m.Channel] = m.Kind
		}
	}
	for name, on := range final {
		kind, seen := events[name]
		if on {
			assert.Equal(t, "subscribe", kind, name)
		} else if seen {
			assert.Equal(t, "unsubscribe", kind, name)
		}
	}
}
