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

// TestReview14ScanSlotMovesAwayAndBack: a slot with keys moves, during a
// Scan of three masters, from the master walked last to the one walked
// first once that one's walk is over, and back again (SETSLOT
// IMPORTING/MIGRATING, MIGRATE, SETSLOT NODE, twice) while or after the
// last master is walked. Its keys were present for the whole Scan, on the
// last master when the first was walked and on the first when the last
// began: they must all be reported, and the Scan must end without an
// error. back says when the slot moves back: after half of the last
// master's other keys are reported, or after all of them.
func TestReview14ScanSlotMovesAwayAndBack(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own clusters and reshards them")
	}
	for _, tc := range []struct {
		name string
		back float64 // the share of the last master's other keys reported first
	}{{"during the last walk", 0.5}, {"after the last walk", 1}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cl := startScanCluster(t, 0, redistest.Options{}, func(cfg *shard.Config) { cfg.Cluster.RefreshInterval = -1 })
			rc, c, ms, byAddr := cl.rc, cl.c, cl.ms, cl.byAddr
			first, last := byAddr[ms[0].Addr], byAddr[ms[2].Addr]
			require.NotNil(t, first)
			require.NotNil(t, last)
			tag := tagOn(t, c, "back", ms[2].Addr, nil)
			slot := cluster.Slot(tag)
			fill, moving, ownerOf := fillAndMoving(ctx, t, c, tag)
			onLast := 0
			for _, k := range fill {
				if ownerOf[k] == last.Addr {
					onLast++
				}
			}
			backAt := int(float64(onLast) * tc.back)
			require.Positive(t, backAt)

			seen := map[string]int{}
			sc := c.Scan(shard.ScanOptions{Count: 10})
			away, back, lastSeen := false, false, 0
			for sc.Next(ctx) {
				k := sc.Key()
				seen[k]++
				switch {
				case !away && ownerOf[k] == ms[1].Addr:
					// The first master is walked: the slot leaves the
					// last for the first.
					_, err := redistest.MoveSlot(ctx, slot, last, first, rc.Masters(), redistest.SlotMoveOptions{Batch: 10})
					require.NoError(t, err)
					away = true
				case ownerOf[k] == last.Addr:
					lastSeen++
					if !back && lastSeen == backAt {
						require.True(t, away)
						_, err := redistest.MoveSlot(ctx, slot, first, last, rc.Masters(), redistest.SlotMoveOptions{Batch: 10})
						require.NoError(t, err)
						back = true
					}
				}
			}
			require.NoError(t, sc.Err())
			require.True(t, away && back, "the slot moved away and back during the Scan")
			requireEveryKey(t, append(fill, moving...), seen)
		})
	}
}
