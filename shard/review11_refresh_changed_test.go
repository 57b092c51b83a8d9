package shard_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview11RefreshChangedIgnoresAMovedMeanwhile: RefreshEvent.Changed
// says whether the refresh changed the slot map the client routes by.
// It compared the table in use before and after the refresh, so a MOVED
// that the client applied while the refresh ran (a command's redirect,
// reported to the SlotMap hook on its own) made a refresh whose answer
// changed nothing say changed: a metric of the refreshes that changed
// the topology counted it.
func TestReview11RefreshChangedIgnoresAMovedMeanwhile(t *testing.T) {
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	type mark struct{}
	var (
		mu     sync.Mutex
		events []shard.RefreshEvent
	)
	cfg := clusterConfig(rc.Seeds()...)
	var slotMaps atomic.Int64
	cfg.Hooks = &shard.Hooks{SlotMap: func(shard.SlotMapEvent) { slotMaps.Add(1) }, Refresh: func(ctx context.Context, ev *shard.RefreshEvent) {
		if ctx.Value(mark{}) != nil { // the test's own refresh
			mu.Lock()
			events = append(events, *ev)
			mu.Unlock()
		}
	}}
	c := newClient(t, cfg)
	ctx := context.Background()

	var key string
	for i := 0; key == ""; i++ {
		if k := fmt.Sprintf("r11rc:%d", i); cluster.Slot(k) == 0 {
			key = k
		}
	}
	_, err := c.Do(ctx, "SET", key, "v")
	require.NoError(t, err)
	owner := slotZeroOwner(t, rc.Nodes[0].Addr)
	var from, to *redistest.Server
	for _, s := range rc.Masters() {
		if s.Addr == owner {
			from = s
		} else if to == nil {
			to = s
		}
	}
	require.NotNil(t, from, "slot 0's master")
	require.NotNil(t, to)

	// While the refresh runs, after it read a topology equal to the one in
	// use: slot 0 moves, and a command meets the MOVED, which the client
	// applies at once.
	var once atomic.Bool
	var moved atomic.Value
	shard.BeforeKeepFailed(func(cc *shard.Client) {
		if cc != c || !once.CompareAndSwap(false, true) {
			return
		}
		if _, err := redistest.MoveSlot(ctx, 0, from, to, rc.Masters(), redistest.SlotMoveOptions{}); err != nil {
			moved.Store(err)
			return
		}
		v, err := redis.String(c.Do(ctx, "GET", key))
		if err == nil && v != "v" {
			err = fmt.Errorf("GET after the move: %q", v)
		}
		if err != nil {
			moved.Store(err)
			return
		}
		moved.Store("ok")
	})
	defer shard.BeforeKeepFailed(nil)
	require.NoError(t, c.Refresh(context.WithValue(ctx, mark{}, true)))
	require.True(t, once.Load(), "the refresh ran the hook")
	require.Equal(t, "ok", moved.Load(), "slot 0 moved and the GET followed it")
	assert.NotZero(t, slotMaps.Load(), "the client applied the MOVED")

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, events, 1)
	assert.NoError(t, events[0].Err)
	assert.False(t, events[0].Changed, "the refresh's answer was the map in use; only the MOVED changed it")
}
