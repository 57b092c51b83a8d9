package shard_test

import (
	"context"
	"sync"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// Hooks.Dial is documented as called after every attempt to open a
// connection, but the connections of a subscription (opened outside the
// pools) were never reported: a dial to a node that refused them, or how
// long it took, did not show.
func TestReview7DialHookSeesSubscriptionConnections(t *testing.T) {
	srv := redistest.StartTB(t, redistest.Options{})
	var (
		mu     sync.Mutex
		events []shard.DialEvent
	)
	cfg := ringConfig([]*redistest.Server{srv})
	cfg.Health.Interval = -1 // no health-check connections
	cfg.Hooks = &shard.Hooks{Dial: func(_ context.Context, ev *shard.DialEvent) {
		mu.Lock()
		events = append(events, *ev)
		mu.Unlock()
	}}
	c := newClient(t, cfg)
	ctx := context.Background()
	mu.Lock()
	before := len(events)
	mu.Unlock()
	sub, err := c.Subscribe(ctx, "r7dh")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	mu.Lock()
	got := events[before:]
	mu.Unlock()
	if len(got) != 1 {
		t.Fatalf("%d dial events for the subscription's connection, want 1: %+v", len(got), got)
	}
	if got[0].Node.Addr != srv.Addr || got[0].Err != nil || got[0].Duration <= 0 {
		t.Errorf("dial event %+v, want a successful dial of %s with its duration", got[0], srv.Addr)
	}
}
