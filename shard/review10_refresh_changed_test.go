package shard_test

import (
	"context"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview10RefreshEventChanged: RefreshEvent.Changed says whether the
// refresh changed the slot map the client routes by. A refresh of a
// cluster whose topology did not change must say unchanged, however
// often it runs; one after a slot moved must say changed.
func TestReview10RefreshEventChanged(t *testing.T) {
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	var mu sync.Mutex
	var events []shard.RefreshEvent
	cfg := clusterConfig(rc.Seeds()...)
	cfg.Hooks = &shard.Hooks{Refresh: func(_ context.Context, ev *shard.RefreshEvent) {
		mu.Lock()
		events = append(events, *ev)
		mu.Unlock()
	}}
	c := newClient(t, cfg)
	ctx := context.Background()
	since := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(events)
	}
	after := func(n int) []shard.RefreshEvent {
		mu.Lock()
		defer mu.Unlock()
		return append([]shard.RefreshEvent(nil), events[n:]...)
	}

	n := since()
	for range 3 {
		require.NoError(t, c.Refresh(ctx))
	}
	evs := after(n)
	require.NotEmpty(t, evs, "Refresh calls the Refresh hook")
	for i, ev := range evs {
		assert.NoError(t, ev.Err, "refresh %d", i)
		assert.False(t, ev.Changed, "refresh %d of an unchanged cluster", i)
	}

	// Slot 0's master gives it to another master.
	var from, to *redistest.Server
	owner := slotZeroOwner(t, rc.Nodes[0].Addr)
	for _, s := range rc.Nodes {
		if s.Addr == owner {
			from = s
		}
	}
	require.NotNil(t, from, "slot 0's master")
	for _, s := range rc.Nodes {
		if s != from {
			to = s
			break
		}
	}
	n = since()
	moveSlot(t, 0, from, to, rc.Nodes)
	changed := false
	deadline := time.Now().Add(30 * time.Second)
	for !changed && time.Now().Before(deadline) {
		require.NoError(t, c.Refresh(ctx))
		for _, ev := range after(n) {
			changed = changed || ev.Changed
		}
	}
	assert.True(t, changed, "a refresh after slot 0 moved says changed")

	n = since()
	require.NoError(t, c.Refresh(ctx))
	for i, ev := range after(n) {
		assert.False(t, ev.Changed, "refresh %d after the move was seen", i)
	}
}

// slotZeroOwner returns the address of slot 0's master, as the node at
// addr sees it (CLUSTER SLOTS).
func slotZeroOwner(t *testing.T, addr string) string {
	t.Helper()
	conn := direct(t, addr)
	defer conn.Close()
	ranges, err := redis.Values(conn.Do("CLUSTER", "SLOTS"))
	require.NoError(t, err)
	for _, r := range ranges {
		rv, err := redis.Values(r, nil)
		require.NoError(t, err)
		require.GreaterOrEqual(t, len(rv), 3)
		start, _ := redis.Int(rv[0], nil)
		if start != 0 {
			continue
		}
		m, err := redis.Values(rv[2], nil)
		require.NoError(t, err)
		require.GreaterOrEqual(t, len(m), 2)
		host, _ := redis.String(m[0], nil)
		port, _ := redis.Int(m[1], nil)
		return net.JoinHostPort(host, strconv.Itoa(port))
	}
	t.Fatal("no range starts at slot 0")
	return ""
}
