package shard_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// bigNames returns n channel names of 40 bytes each.
func bigNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("bigunsub:%031d", i)
	}
	return names
}

// TestSubscriptionBigCallsKeepTheConnection: a Subscribe, then an
// Unsubscribe, of many names on one node whose pubsub output buffer
// limit is low do not make the server close the connection (which would
// lose the other names on it): the confirmations are read while the
// commands are written. A name subscribed beside them still receives.
func TestSubscriptionBigCallsKeepTheConnection(t *testing.T) {
	n := 150_000
	servers := redistest.StartNTB(t, 1, redistest.Options{})
	_, err := servers[0].Do("CONFIG", "SET", "client-output-buffer-limit", "pubsub 2mb 1mb 60")
	require.NoError(t, err)
	c, err := shard.New(context.Background(), ringConfig(servers))
	require.NoError(t, err)
	defer c.Close()
	ctx := context.Background()
	sub, err := c.NewSubscription(shard.SubscriptionOptions{})
	require.NoError(t, err)
	defer sub.Close()

	// The application reads everything; the messages of "keep" are counted.
	var mu sync.Mutex
	kept := 0
	confirmed := map[string]int{} // unsubscribe confirmations, by name
	rctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			v, err := sub.Receive(rctx)
			if err != nil {
				if rctx.Err() != nil {
					return
				}
				continue
			}
			mu.Lock()
			switch m := v.(type) {
			case redis.Message:
				if m.Channel == "keep" {
					kept++
				}
			case redis.Subscription:
				if m.Kind == "unsubscribe" && strings.HasPrefix(m.Channel, "bigunsub:") {
					confirmed[m.Channel]++
				}
			}
			mu.Unlock()
		}
	}()
	defer func() { cancel(); wg.Wait() }()

	require.NoError(t, sub.Subscribe(ctx, "keep"))
	names := bigNames(n)
	start := time.Now()
	require.NoError(t, sub.Subscribe(ctx, names...))
	t.Logf("subscribed %d names in %v", n, time.Since(start))
	require.Zero(t, sub.Stats().Lost, "the server closed the connection during the Subscribe")
	require.Equal(t, n+1, pubsubChannels(t, servers[0]))

	start = time.Now()
	require.NoError(t, sub.Unsubscribe(ctx, names...))
	t.Logf("Unsubscribe of %d names returned after %v", n, time.Since(start))
	waitFor(t, 60*time.Second, "only keep left on the server", func() bool {
		return pubsubChannels(t, servers[0]) == 1 || sub.Stats().Lost > 0
	})
	require.Zero(t, sub.Stats().Lost, "the server closed the connection during the Unsubscribe")
	require.Equal(t, int64(1), sub.Stats().Dials, "the connection was dialled again")
	// Each name's unsubscribe is confirmed to the application, once.
	waitFor(t, 60*time.Second, "every unsubscribe confirmed", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(confirmed) == n
	})
	mu.Lock()
	for name, k := range confirmed {
		if k != 1 {
			t.Errorf("%s confirmed %d times", name, k)
			break
		}
	}
	mu.Unlock()

	// "keep" still delivers on the same connection.
	waitFor(t, 30*time.Second, "a message of keep", func() bool {
		_, err := c.Do(ctx, "PUBLISH", "keep", "x")
		require.NoError(t, err)
		mu.Lock()
		defer mu.Unlock()
		return kept > 0
	})
	require.Zero(t, sub.Stats().Lost)
}
