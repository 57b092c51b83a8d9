package shard_test

import (
	"context"
	"testing"
	"time"

	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// TestReview15ScanSlotLeavesAndComesBackDuringItsWalk: a slot with keys
// leaves the master walked first for the one walked last once that
// master's walk is under way (its first page in), and comes back to it
// (SETSLOT IMPORTING/MIGRATING, MIGRATE, SETSLOT NODE, both ways) before
// its walk ends or once the second master's walk has begun, the Scan
// paused between pages. The slot's keys were
// present for the whole Scan, on one master or the other: they must all
// be reported, and the Scan must end without an error.
func TestReview15ScanSlotLeavesAndComesBackDuringItsWalk(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster and reshards it")
	}
	for _, afterWalk := range []bool{false, true} {
		t.Run(map[bool]string{false: "back during its walk", true: "back after its walk"}[afterWalk], func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cl := startScanCluster(t, 0, redistest.Options{}, func(cfg *shard.Config) { cfg.Cluster.RefreshInterval = -1 })
			rc, c, ms, byAddr := cl.rc, cl.c, cl.ms, cl.byAddr
			first, last := byAddr[ms[0].Addr], byAddr[ms[2].Addr]
			tag := tagOn(t, c, "bounce", ms[0].Addr, nil)
			slot := cluster.Slot(tag)
			fill, moving, ownerOf := fillAndMoving(ctx, t, c, tag)
			onFirst := 0
			for _, k := range fill {
				if ownerOf[k] == first.Addr {
					onFirst++
				}
			}
			backAt := onFirst * 9 / 10
			if afterWalk {
				backAt = 0
			}
			require.True(t, afterWalk || backAt > 10)

			seen := map[string]int{}
			sc := c.Scan(shard.ScanOptions{Count: 10})
			away, back, firstSeen := false, false, 0
			for sc.Next(ctx) {
				k := sc.Key()
				seen[k]++
				if afterWalk && away && !back && ownerOf[k] == ms[1].Addr {
					_, err := redistest.MoveSlot(ctx, slot, last, first, rc.Masters(), redistest.SlotMoveOptions{Batch: 10})
					require.NoError(t, err)
					back = true
				}
				if ownerOf[k] != first.Addr {
					continue
				}
				firstSeen++
				switch {
				case !away:
					_, err := redistest.MoveSlot(ctx, slot, first, last, rc.Masters(), redistest.SlotMoveOptions{Batch: 10})
					require.NoError(t, err)
					away = true
				case !back && firstSeen == backAt:
					_, err := redistest.MoveSlot(ctx, slot, last, first, rc.Masters(), redistest.SlotMoveOptions{Batch: 10})
					require.NoError(t, err)
					back = true
				}
			}
			require.NoError(t, sc.Err())
			require.True(t, away && back, "the slot left the first master and came back during its walk")
			requireEveryKey(t, append(fill, moving...), seen)
		})
	}
}
