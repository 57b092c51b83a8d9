package shard_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// A Sentinel shard's master dies: the health checks mark the shard's node
// down, then the Sentinel fails it over. The NodeDown must come before
// the ReplicaPromoted of the failover that follows it, and a node's events
// come one at a time. Here the NodeDown hook is slow (it returns once the
// client follows the failover, as an alert sent over a slow network
// would): before, the ReplicaPromoted was given at once, on the goroutine
// that installed the new master, while the NodeDown was still being
// given, so a hook that logs its events when done logged the promotion
// first.
func TestReview13SentinelPromotionComesAfterTheNodeDown(t *testing.T) {
	o := sentinelSetOptions(1)
	o.Sentinels = 1
	set := redistest.StartSentinelsTB(t, o)
	old, next := shardServers(t, set, 0)
	var (
		cli     atomic.Pointer[shard.Client]
		mu      sync.Mutex
		log     []shard.NodeEventKind
		running atomic.Int32
		overlap atomic.Bool
		blocked atomic.Bool
	)
	cfg := sentinelConfig(set)
	cfg.Hooks = &shard.Hooks{NodeState: func(ev shard.NodeEvent) {
		if ev.Node.Name != "shard-0" {
			return
		}
		if running.Add(1) > 1 {
			overlap.Store(true)
		}
		defer running.Add(-1)
		if ev.Kind == shard.NodeDown && blocked.CompareAndSwap(false, true) {
			// The first NodeDown: slow, until the failover is followed.
			deadline := time.Now().Add(30 * time.Second)
			for time.Now().Before(deadline) {
				if c := cli.Load(); c != nil {
					if st := c.Stats().Sentinel; len(st) == 1 && st[0].Master == next.Addr {
						break
					}
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
		mu.Lock()
		log = append(log, ev.Kind)
		mu.Unlock()
	}}
	c := newClient(t, cfg)
	cli.Store(c)
	events := func() []shard.NodeEventKind {
		mu.Lock()
		defer mu.Unlock()
		return append([]shard.NodeEventKind(nil), log...)
	}
	if err := old.Kill(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, "a NodeDown and a ReplicaPromoted of shard-0", func() bool {
		var down, promoted bool
		for _, k := range events() {
			down = down || k == shard.NodeDown
			promoted = promoted || k == shard.ReplicaPromoted
		}
		return down && promoted
	})
	got := events()
	if len(got) < 2 {
		t.Fatalf("events of shard-0: %v", got)
	}
	if got[0] != shard.NodeDown || got[1] != shard.ReplicaPromoted {
		t.Errorf("events of shard-0 %v: want the NodeDown of the dead master, then the ReplicaPromoted", got)
	}
	if overlap.Load() {
		t.Error("two events of shard-0 were given at once")
	}
}

// A NodeState hook may use the client (Stats, Refresh: docs/observability.md).
// A Sentinel shard's ReplicaPromoted found by a query (here: no Sentinel
// answers, and the old master says it replicates from the new one) was
// given on the goroutine that runs the shard's queries, so a Refresh
// from the hook waited for a query that goroutine was to run after the
// hook: it hung until its context ended.
func TestReview13SentinelPromotionHookMayRefresh(t *testing.T) {
	set, cfg := loneSentinel(t)
	type result struct {
		err  error
		took time.Duration
	}
	results := make(chan result, 4)
	var cli atomic.Pointer[shard.Client]
	cfg.Hooks = &shard.Hooks{NodeState: func(ev shard.NodeEvent) {
		c := cli.Load()
		if ev.Kind != shard.ReplicaPromoted || c == nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		start := time.Now()
		err := c.Refresh(ctx)
		select {
		case results <- result{err, time.Since(start)}:
		default:
		}
	}}
	c := newClient(t, cfg)
	cli.Store(c)
	_, next := unseenFailover(t, set)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	waitFor(t, 20*time.Second, "the client to follow the failover to "+next.Addr, func() bool {
		_ = c.Refresh(ctx) // the Sentinel is gone: an error
		st := c.Stats().Sentinel
		return len(st) == 1 && st[0].Master == next.Addr
	})
	var r result
	select {
	case r = <-results:
	case <-time.After(10 * time.Second):
		t.Fatal("no ReplicaPromoted given")
	}
	if errors.Is(r.err, context.DeadlineExceeded) || r.took >= 3*time.Second {
		t.Errorf("Refresh from the ReplicaPromoted hook: %v after %v; want the query's answer, at once", r.err, r.took)
	}
}
