package shard_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// clientGoroutines counts the goroutines running code of package shard
// that no test function started (the clients' own).
func clientGoroutines() (int, string) {
	n := 0
	var sample string
	for _, g := range stacks() {
		if strings.Contains(g, "github.com/shardis/shardis/shard.") && !strings.Contains(g, "shard_test.") {
			n++
			if sample == "" {
				sample = g
			}
		}
	}
	return n, sample
}

// hookMeter counts the hooks in flight and the most at once, and the
// events by name; each hook call takes slow.
type hookMeter struct {
	slow     time.Duration
	mu       sync.Mutex
	inflight int
	most     int
	events   map[string]int
}

func (h *hookMeter) call(what string) {
	h.mu.Lock()
	h.inflight++
	h.most = max(h.most, h.inflight)
	if h.events == nil {
		h.events = map[string]int{}
	}
	h.events[what]++
	h.mu.Unlock()
	time.Sleep(h.slow)
	h.mu.Lock()
	h.inflight--
	h.mu.Unlock()
}

func (h *hookMeter) count(what string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.events[what]
}

// warmBase runs a command on every node of c (each node's automatic
// pipeline starts its writer) and returns the client's goroutines then.
func warmBase(t *testing.T, c *shard.Client, prefix string) int {
	t.Helper()
	for i := range 64 {
		_, err := c.Do(context.Background(), "GET", fmt.Sprintf("%s:%d", prefix, i))
		require.NoError(t, err)
	}
	n, _ := clientGoroutines()
	return n
}

// settles waits (10s at most) until the client's goroutines are back to
// at most n, and reports whether they are.
func settles(n int) bool {
	deadline := time.Now().Add(10 * time.Second)
	for {
		if got, _ := clientGoroutines(); got <= n {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// requireClientGoroutinesGone waits (10s at most) until the goroutines
// of package shard are back to before, the count before the test's
// client was made: every goroutine of the closed client ended.
func requireClientGoroutinesGone(t *testing.T, before int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		n, sample := clientGoroutines()
		if n <= before {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines of package shard after Close, %d before the client, e.g.:\n%s", n, before, sample)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestReview12SlowCallbacksDoNotPileUpGoroutines: the NodeState,
// SlotMap and Refresh hooks run on the goroutine that saw the change (a
// health check, a refresh, a command), never on one started per event:
// with hooks that take 300ms while many events come (a node flapping,
// slots moving while callers meet MOVED replies and ask for refreshes),
// the hooks in flight at once are at most the callers and the client's
// background goroutines, the client's goroutines are back to what they
// were soon after the callers are done, and none is left once Close
// returned.
func TestReview12SlowCallbacksDoNotPileUpGoroutines(t *testing.T) {
	const slow = 300 * time.Millisecond
	t.Run("cluster", func(t *testing.T) {
		const callers = 20
		rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
		before, _ := clientGoroutines()
		cfg := clusterConfig(rc.Seeds()...)
		cfg.Cluster.MinRefreshInterval = time.Millisecond
		cfg.Cluster.RefreshInterval = 50 * time.Millisecond
		h := &hookMeter{slow: slow}
		cfg.Hooks = &shard.Hooks{
			Refresh:   func(context.Context, *shard.RefreshEvent) { h.call("refresh") },
			SlotMap:   func(shard.SlotMapEvent) { h.call("slotmap") },
			NodeState: func(shard.NodeEvent) { h.call("node") },
		}
		c, err := shard.New(context.Background(), cfg)
		require.NoError(t, err)
		base := warmBase(t, c, "r12cgw")

		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		var keys []string // keys of slot 0, which moves
		for i := 0; len(keys) < callers; i++ {
			if k := fmt.Sprintf("r12cg:%d", i); cluster.Slot(k) == 0 {
				keys = append(keys, k)
			}
		}
		owner := slotZeroOwner(t, rc.Nodes[0].Addr)
		var a, b *redistest.Server
		for _, s := range rc.Masters() {
			if s.Addr == owner {
				a = s
			} else if b == nil {
				b = s
			}
		}
		require.NotNil(t, a)
		require.NotNil(t, b)
		var wg sync.WaitGroup
		for g := range callers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 5 {
					rctx, rcancel := context.WithTimeout(ctx, 20*time.Millisecond)
					_ = c.Refresh(rctx) // callers give up; their refreshes end
					rcancel()
					_, _ = c.Do(ctx, "GET", keys[g]) // MOVED replies while slot 0 moves
				}
			}()
		}
		from, to := a, b
		for range 3 { // slot 0 back and forth, ending at b: slot-map events
			_, err := redistest.MoveSlot(ctx, 0, from, to, rc.Masters(), redistest.SlotMoveOptions{})
			require.NoError(t, err)
			from, to = to, from
		}
		wg.Wait()
		require.Positive(t, h.count("refresh"))
		// Give or take a health check's probes, one per node.
		assert.True(t, settles(base+3), "the client's goroutines back to %d once the callers are done", base)
		h.mu.Lock()
		t.Logf("events %v, at most %d hooks at once", h.events, h.most)
		assert.Positive(t, h.events["slotmap"])
		assert.LessOrEqual(t, h.most, callers+2, "hooks in flight: the callers' and the background refresh's")
		h.mu.Unlock()
		require.NoError(t, c.Close())
		requireClientGoroutinesGone(t, before)
	})
	t.Run("ring", func(t *testing.T) {
		const callers = 8
		servers := redistest.StartNTB(t, 3, redistest.Options{})
		before, _ := clientGoroutines()
		cfg := ringConfig(servers)
		cfg.Health = shard.HealthOptions{Interval: 10 * time.Millisecond, FailureLimit: 1, Timeout: 100 * time.Millisecond}
		h := &hookMeter{slow: slow}
		var mu sync.Mutex
		kinds := map[shard.NodeEventKind]int{}
		cfg.Hooks = &shard.Hooks{NodeState: func(ev shard.NodeEvent) {
			mu.Lock()
			kinds[ev.Kind]++
			mu.Unlock()
			h.call(ev.Kind.String())
		}}
		c, err := shard.New(context.Background(), cfg)
		require.NoError(t, err)
		base := warmBase(t, c, "r12crw")
		ctx := context.Background()
		// A node that flaps, down and up a few times, while callers'
		// commands fail on it (each failure may count towards down).
		stop := loopWorkers(callers, func(g, i int) {
			_, _ = c.Do(ctx, "GET", fmt.Sprintf("r12cr:%d:%d", g, i))
		})
		for range 3 {
			require.NoError(t, servers[1].Pause())
			waitFor(t, 20*time.Second, "the node to be marked down", func() bool {
				mu.Lock()
				defer mu.Unlock()
				return kinds[shard.NodeDown] > kinds[shard.NodeUp]
			})
			require.NoError(t, servers[1].Resume())
			waitFor(t, 20*time.Second, "the node to be up again", func() bool {
				mu.Lock()
				defer mu.Unlock()
				return kinds[shard.NodeDown] == kinds[shard.NodeUp]
			})
		}
		stop()
		// Give or take a health check's probes, one per node.
		assert.True(t, settles(base+len(servers)), "the client's goroutines back to %d once the callers are done", base)
		h.mu.Lock()
		t.Logf("events %v, at most %d hooks at once", h.events, h.most)
		// The callers' and the health checks' (one per node).
		assert.LessOrEqual(t, h.most, callers+len(servers), "hooks in flight")
		h.mu.Unlock()
		require.NoError(t, c.Close())
		requireClientGoroutinesGone(t, before)
	})
}
