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

// TestReview17ScanBounceAfterALateAnswer: the master walked first is
// frozen (SIGSTOP) while the Scan asks its slots and config epoch before
// its first page, and thawed once that question failed; then a slot with
// 60 keys leaves it as its first SCAN page is sent and comes back once
// the page is in (COUNT large enough to cover the master in one call).
// The keys were present for the whole Scan: each must be reported, or
// the Scan must end with an error.
func TestReview17ScanBounceAfterALateAnswer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster, freezes a master and reshards it")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	var (
		mu                 sync.Mutex
		errs               []error
		clusterOps, pages  int
		froze, away, back  bool
		freeze, thaw, move func(out bool) error
	)
	note := func(err error) bool {
		if err != nil {
			errs = append(errs, err)
		}
		return err == nil
	}
	hooks := &shard.Hooks{
		Start: func(ctx context.Context, op *shard.Op) context.Context {
			mu.Lock()
			defer mu.Unlock()
			if move == nil {
				return ctx
			}
			switch op.Name {
			case "CLUSTER":
				clusterOps++
				if clusterOps == 1 {
					froze = note(freeze(true))
				}
			case "SCAN":
				pages++
				if pages == 1 {
					away = note(move(true))
				}
			}
			return ctx
		},
		Finish: func(ctx context.Context, op *shard.Op) {
			mu.Lock()
			defer mu.Unlock()
			if move == nil {
				return
			}
			switch {
			case op.Name == "CLUSTER" && clusterOps == 1 && froze:
				note(thaw(false))
			case op.Name == "SCAN" && pages == 1 && away && !back:
				back = note(move(false))
			}
		},
	}
	cl := startScanCluster(t, 0, redistest.Options{}, func(cfg *shard.Config) {
		cfg.Cluster.RefreshInterval = -1
		cfg.Health.Interval = -1
		cfg.Pool.ReadTimeout = 500 * time.Millisecond
		cfg.Hooks = hooks
	})
	first, last := cl.byAddr[cl.ms[0].Addr], cl.byAddr[cl.ms[2].Addr]
	t.Cleanup(func() { _ = first.Resume() })
	tag := tagOn(t, cl.c, "late", first.Addr, nil)
	slot := cluster.Slot(tag)
	fill, moving, _ := fillAndMoving(ctx, t, cl.c, tag)
	want := append(fill, moving...)

	mu.Lock()
	freeze = func(bool) error { return first.Pause() }
	thaw = func(bool) error { return first.Resume() }
	move = func(out bool) error {
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
	require.Empty(t, errs)
	require.True(t, froze && away && back, "the first master was frozen as it was asked, then the slot left it around its first page and came back")
	mu.Unlock()
	if sc.Err() == nil {
		requireEveryKey(t, want, seen)
	}
}
