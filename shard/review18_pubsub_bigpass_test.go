package shard_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// pubsubChannels returns the number of channels server s has subscribers
// for (INFO stats pubsub_channels).
func pubsubChannels(t *testing.T, s *redistest.Server) int {
	t.Helper()
	out, err := s.Do("INFO", "stats")
	require.NoError(t, err)
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "pubsub_channels:"); ok {
			n, err := strconv.Atoi(v)
			require.NoError(t, err)
			return n
		}
	}
	t.Fatalf("no pubsub_channels in INFO stats: %q", out)
	return 0
}

// TestSubscriptionPlacementPassLetsCallsIn: the pass that moves the
// channels of an ejected shard over a subscription of many channels does
// not keep the subscription's other calls waiting for the whole pass.
func TestSubscriptionPlacementPassLetsCallsIn(t *testing.T) {
	n := 200_000
	if testing.Short() {
		n = 50_000
	}
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	c, rr := ejectableRing(t, ringConfig(servers))
	ctx := context.Background()
	names := make([]string, n)
	for i := range names {
		names[i] = "big:" + strconv.Itoa(i)
	}
	start := time.Now()
	sub, err := c.NewSubscription(shard.SubscriptionOptions{})
	require.NoError(t, err)
	defer sub.Close()
	require.NoError(t, sub.Subscribe(ctx, names...))
	t.Logf("subscribed %d channels in %v", n, time.Since(start))
	on0, on1 := pubsubChannels(t, servers[0]), pubsubChannels(t, servers[1])
	require.Equal(t, n, on0+on1)
	require.Greater(t, on1, n/4)

	// Probe: Unsubscribe calls of a name never subscribed, one after the
	// other, while the pass moves shard 1's channels to shard 0.
	stop := make(chan struct{})
	var mu sync.Mutex
	var worst time.Duration
	var probes int
	var probeErr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			t0 := time.Now()
			err := sub.Unsubscribe(ctx, fmt.Sprintf("probe:%d", i))
			d := time.Since(t0)
			mu.Lock()
			probes++
			worst = max(worst, d)
			if err != nil && probeErr == nil {
				probeErr = err
			}
			mu.Unlock()
			time.Sleep(time.Millisecond)
		}
	}()
	start = time.Now()
	require.NoError(t, rr.Eject(1))
	// Every channel once on shard 0, none left on shard 1.
	waitFor(t, 50*time.Second, "every channel on shard 0", func() bool {
		return pubsubChannels(t, servers[0]) == n && pubsubChannels(t, servers[1]) == 0
	})
	moved := time.Since(start)
	close(stop)
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	require.NoError(t, probeErr)
	require.Equal(t, n, sub.Stats().Channels)
	require.Zero(t, sub.Stats().Lost, "a connection was taken for lost during the pass")
	t.Logf("moved %d channels in %v; %d Unsubscribe probes, the slowest waited %v", on1, moved, probes, worst)
	require.Less(t, worst, time.Second, "an Unsubscribe waited for the placement pass")
}
