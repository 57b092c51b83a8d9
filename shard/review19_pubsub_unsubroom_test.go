package shard_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// numPat returns the number of patterns server s has subscribers for.
func numPat(t *testing.T, s *redistest.Server) int {
	t.Helper()
	out, err := s.Do("PUBSUB", "NUMPAT")
	require.NoError(t, err)
	n, err := strconv.Atoi(strings.TrimSpace(out))
	require.NoError(t, err)
	return n
}

// TestReview19PubSubMoveUnsubscribesWaitForRoom: a ring change moves a
// third of many channels away from the nodes that carried them. The unsubscribes of the moved names are bounded
// like the subscribes: the confirmations a connection awaits stay under
// the subscription's limit, so a node with a low pubsub output limit
// keeps the connection (losing it would lose every other name on it for
// a while), and every name still delivers after the move.
func TestReview19PubSubMoveUnsubscribesWaitForRoom(t *testing.T) {
	const n, patterns, limit = 150_000, 3000, 256 << 10
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	for _, s := range servers {
		_, err := s.Do("CONFIG", "SET", "client-output-buffer-limit", "pubsub 512kb 512kb 0")
		require.NoError(t, err)
	}
	c := newClient(t, ringConfig(servers))
	rr := c.Router().(*shard.RingRouter)
	require.NoError(t, rr.Eject(0))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	sub, err := c.NewSubscription(shard.SubscriptionOptions{BufferSize: 1 << 20})
	require.NoError(t, err)
	defer sub.Close()
	shard.SetAwaitedRepliesLimit(sub, limit)

	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("r19move:channel:%023d", i)
	}
	pats := make([]string, patterns)
	for i := range pats {
		pats[i] = fmt.Sprintf("r19move:pattern:%05d:*", i)
	}
	require.NoError(t, sub.Subscribe(ctx, names...))
	require.NoError(t, sub.PSubscribe(ctx, pats...))

	// The most confirmations a connection awaited, sampled all along.
	most := sampleMost(t, func() int { return shard.AwaitedUnsubscribes(sub) })

	// Every channel on exactly one node of those in the ring, every
	// pattern on each configured shard (an ejected one too); the check
	// ends early when a connection was lost.
	var lastSeen atomic.Value
	defer func() { t.Logf("last seen: %v", lastSeen.Load()) }()
	placed := func(in []*redistest.Server, out *redistest.Server) func() bool {
		return func() bool {
			if sub.Stats().Lost > 0 {
				return true
			}
			total := 0
			var seen []string
			for _, s := range servers {
				seen = append(seen, fmt.Sprintf("%s: %d channels %d patterns", s.Addr, pubsubChannels(t, s), numPat(t, s)))
			}
			lastSeen.Store(strings.Join(seen, ", "))
			for _, s := range servers {
				if numPat(t, s) != patterns {
					return false
				}
			}
			for _, s := range in {
				k := pubsubChannels(t, s)
				if k < n/len(servers)/2 { // about n/len(in) each
					return false
				}
				total += k
			}
			return total == n && (out == nil || pubsubChannels(t, out) == 0)
		}
	}
	waitFor(t, 2*time.Minute, "the names on shards 1 and 2", placed(servers[1:], servers[0]))
	require.Zero(t, sub.Stats().Lost)

	// Restored: a third of the channels leave shards 1 and 2.
	start := time.Now()
	require.NoError(t, rr.Restore(0))
	waitFor(t, 3*time.Minute, "the channels moved to shard 0", placed(servers, nil))
	t.Logf("moved to shard 0 in %v, %+v, most awaited %d", time.Since(start), sub.Stats(), most.Load())
	assert.Zero(t, sub.Stats().Lost, "a node closed the connection")
	assert.LessOrEqual(t, most.Load(), int64(2*limit), "unsubscribe confirmations awaited beyond the limit")

	// Ejected again: every channel of shard 0 leaves it.
	start = time.Now()
	require.NoError(t, rr.Eject(0))
	waitFor(t, 3*time.Minute, "the names back on shards 1 and 2", placed(servers[1:], servers[0]))
	t.Logf("moved from shard 0 in %v, %+v, most awaited %d", time.Since(start), sub.Stats(), most.Load())
	assert.Zero(t, sub.Stats().Lost, "a node closed the connection")
	assert.LessOrEqual(t, most.Load(), int64(2*limit), "unsubscribe confirmations awaited beyond the limit")

	// A sample of the channels, and a channel of each of a few patterns,
	// deliver after the moves.
	want := map[string]bool{}
	for i := 0; i < n; i += n / 50 {
		want[names[i]] = true
	}
	for i := 0; i < patterns; i += patterns / 10 {
		want[strings.TrimSuffix(pats[i], "*")+"x"] = true
	}
	for ch := range want {
		_, err := c.Do(ctx, "PUBLISH", ch, "after")
		require.NoError(t, err)
	}
	rctx, rcancel := context.WithTimeout(ctx, time.Minute)
	defer rcancel()
	for len(want) > 0 {
		v, err := sub.Receive(rctx)
		require.NoError(t, err, "still missing %d messages", len(want))
		if m, ok := v.(redis.Message); ok && string(m.Data) == "after" {
			delete(want, m.Channel)
		}
	}
}

// sampleMost calls f every millisecond until the test ends and returns
// the largest value it gave so far.
func sampleMost(t *testing.T, f func() int) *atomic.Int64 {
	t.Helper()
	var most atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
			if a := int64(f()); a > most.Load() {
				most.Store(a)
			}
		}
	})
	t.Cleanup(func() { close(stop); wg.Wait() })
	return &most
}
