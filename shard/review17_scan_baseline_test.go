package shard_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// TestReview17ScanBounceAroundTheFirstPage: a slot with 60 keys leaves
// the master walked first as its first SCAN page is sent (Start hook),
// and comes back to it once that page is in (Finish hook), before the
// Scan asks that master anything else. The page (COUNT large enough to
// cover the whole master in one call) did not meet the slot's keys, and
// the master's slots and config epoch look the same from then on. The
// keys were present for the whole Scan (on one master or the other):
// each must be reported, or the Scan must end with an error.
func TestReview17ScanBounceAroundTheFirstPage(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster and reshards it")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	var (
		mu       sync.Mutex
		moveErrs []error
		pages    int
		away     bool
		back     bool
		onMove   func(out bool) error
	)
	hooks := &shard.Hooks{
		Start: func(ctx context.Context, op *shard.Op) context.Context {
			mu.Lock()
			defer mu.Unlock()
			if op.Name == "SCAN" && onMove != nil {
				pages++
				if pages == 1 {
					if err := onMove(true); err != nil {
						moveErrs = append(moveErrs, err)
					} else {
						away = true
					}
				}
			}
			return ctx
		},
		Finish: func(ctx context.Context, op *shard.Op) {
			mu.Lock()
			defer mu.Unlock()
			if op.Name == "SCAN" && onMove != nil && pages == 1 && away && !back {
				if err := onMove(false); err != nil {
					moveErrs = append(moveErrs, err)
				} else {
					back = true
				}
			}
		},
	}
	cl := startScanCluster(t, 0, redistest.Options{}, func(cfg *shard.Config) {
		cfg.Cluster.RefreshInterval = -1
		cfg.Hooks = hooks
	})
	first, last := cl.byAddr[cl.ms[0].Addr], cl.byAddr[cl.ms[2].Addr]
	tag := tagOn(t, cl.c, "edge", first.Addr, nil)
	slot := cluster.Slot(tag)
	fill, moving, _ := fillAndMoving(ctx, t, cl.c, tag)
	want := append(fill, moving...)

	mu.Lock()
	onMove = func(out bool) error {
		from, to := first, last
		if !out {
			from, to = last, first
		}
		_, err := redistest.MoveSlot(ctx, slot, from, to, cl.rc.Masters(), redistest.SlotMoveOptions{Batch: 10})
		return err
	}
	mu.Unlock()

	seen := map[string]int{}
	sc := cl.c.Scan(shard.ScanOptions{Count: 100000})
	for sc.Next(ctx) {
		seen[sc.Key()]++
	}
	mu.Lock()
	require.Empty(t, moveErrs)
	require.True(t, away && back, "the slot left the first master around its first page and came back")
	mu.Unlock()
	require.NoError(t, sc.Err())
	requireEveryKey(t, want, seen)
}
