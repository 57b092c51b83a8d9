package shard_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// TestReview17ScanMasterUnreachableAtTheEnd: a slot with 60 keys leaves
// the master walked first once its first page is in and comes back to it
// when nine tenths of its keys are reported (its config epoch grows); that master is then
// frozen (SIGSTOP) once every key of the master walked last is reported,
// so that it cannot answer as the Scan ends. Its keys are all still
// there. Each key must be reported, or the Scan must end with a
// *ScanIncompleteError (errors.Is ErrScanIncomplete) naming that master:
// never keys missed without an error.
func TestReview17ScanMasterUnreachableAtTheEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster, reshards it and freezes a master")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl := startScanCluster(t, 0, redistest.Options{}, func(cfg *shard.Config) {
		cfg.Cluster.RefreshInterval = -1
		cfg.Health.Interval = -1
		cfg.Pool.ReadTimeout = 500 * time.Millisecond
		cfg.Pool.WriteTimeout = 500 * time.Millisecond
	})
	first, last := cl.byAddr[cl.ms[0].Addr], cl.byAddr[cl.ms[2].Addr]
	tag := tagOn(t, cl.c, "gone", first.Addr, nil)
	slot := cluster.Slot(tag)
	fill, moving, ownerOf := fillAndMoving(ctx, t, cl.c, tag)
	want := append(fill, moving...)
	onFirst, onLast := 0, 0
	for _, k := range fill {
		switch ownerOf[k] {
		case first.Addr:
			onFirst++
		case last.Addr:
			onLast++
		}
	}
	backAt := onFirst * 9 / 10
	frozen := false
	t.Cleanup(func() {
		if frozen {
			_ = first.Resume()
		}
	})

	seen := map[string]int{}
	sc := cl.c.Scan(shard.ScanOptions{Count: 10})
	away, back, firstSeen, lastSeen := false, false, 0, 0
	for sc.Next(ctx) {
		k := sc.Key()
		seen[k]++
		switch ownerOf[k] {
		case first.Addr:
			firstSeen++
			switch {
			case !away:
				_, err := redistest.MoveSlot(ctx, slot, first, last, cl.rc.Masters(), redistest.SlotMoveOptions{Batch: 10})
				require.NoError(t, err)
				away = true
			case !back && firstSeen == backAt:
				_, err := redistest.MoveSlot(ctx, slot, last, first, cl.rc.Masters(), redistest.SlotMoveOptions{Batch: 10})
				require.NoError(t, err)
				back = true
			}
		case last.Addr:
			lastSeen++
			if lastSeen == onLast && !frozen {
				require.NoError(t, first.Pause())
				frozen = true
			}
		}
	}
	err := sc.Err()
	require.True(t, away && back && frozen, "the slot bounced on the first master, which was then frozen")
	require.NoError(t, first.Resume())
	frozen = false
	missed := 0
	for _, k := range want {
		if seen[k] == 0 {
			missed++
		}
	}
	t.Logf("missed %d of %d keys; Scan error: %v", missed, len(want), err)
	if missed > 0 || err != nil {
		require.Error(t, err, "%d keys missed without an error", missed)
		require.ErrorIs(t, err, shard.ErrScanIncomplete)
		var se *shard.ScanIncompleteError
		require.ErrorAs(t, err, &se)
		require.Equal(t, first.Addr, se.Node.Addr)
		require.Error(t, se.Err, "the cause")
	}
}
