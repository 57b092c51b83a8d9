package shard_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview11MovedReportsOnlyItsOwnSlot: a MOVED reply points its slot
// at the new owner at once and tells the SlotMap hook. It reported the
// change from the table it replaced to the table in use when it came to
// report, so a refresh that installed its answer in between (and told
// the hook of its own changes) had those changes told twice: two slots
// moved by hand, a program counting moved slots from the hook counted
// three.
func TestReview11MovedReportsOnlyItsOwnSlot(t *testing.T) {
	c, key, slotMoves := twoSlotsMovedByHand(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// A GET meets the MOVED for slot 0; once the client has applied it,
	// and before it reports it, a refresh installs the whole new map.
	var once atomic.Bool
	var refreshed atomic.Value
	shard.AfterMoved(func(cc *shard.Client) {
		if cc != c || !once.CompareAndSwap(false, true) {
			return
		}
		if err := c.Refresh(ctx); err != nil {
			refreshed.Store(err.Error())
			return
		}
		refreshed.Store("ok")
	})
	defer shard.AfterMoved(nil)
	v, err := redis.String(c.Do(ctx, "GET", key))
	require.NoError(t, err)
	require.Equal(t, "v", v)
	require.True(t, once.Load(), "the GET met a MOVED")
	require.Equal(t, "ok", refreshed.Load())
	moved, events := slotMoves()
	assert.Equal(t, map[int]int{0: 1, 1: 1}, moved, "each slot that moved is reported once: %+v", events)
}

// TestReview11RefreshReportsOnlyWhatItChanged: a refresh told the SlotMap
// hook the change from the table it had read to its answer. A MOVED that
// the client applied in between (and told the hook of) was then
// overwritten by the refresh, and its slot told a second time: two slots
// moved by hand, a program counting moved slots counted three.
func TestReview11RefreshReportsOnlyWhatItChanged(t *testing.T) {
	c, key, slotMoves := twoSlotsMovedByHand(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// The refresh has read the table in use when a GET meets the MOVED
	// for slot 0, which the client applies at once.
	var once atomic.Bool
	var got atomic.Value
	shard.BeforeInstall(func(cc *shard.Client) {
		if cc != c || !once.CompareAndSwap(false, true) {
			return
		}
		v, err := redis.String(c.Do(ctx, "GET", key))
		if err == nil && v != "v" {
			err = fmt.Errorf("GET: %q", v)
		}
		if err != nil {
			got.Store(err.Error())
			return
		}
		got.Store("ok")
	})
	defer shard.BeforeInstall(nil)
	require.NoError(t, c.Refresh(ctx))
	require.True(t, once.Load(), "the refresh ran the hook")
	require.Equal(t, "ok", got.Load(), "the GET followed the MOVED")
	moved, events := slotMoves()
	assert.Equal(t, map[int]int{0: 1, 1: 1}, moved, "each slot that moved is reported once: %+v", events)
}

// twoSlotsMovedByHand starts a three-master cluster and a client of it
// that records its SlotMap events, sets a key of slot 0, and moves slots
// 0 and 1 from their master to another one behind the client's back. It
// returns the client, the key, and a function that counts how many
// times the recorded events reported each slot moved (each move checked
// to be from that master to the other), with the events.
func twoSlotsMovedByHand(t *testing.T) (*shard.Client, string, func() (map[int]int, []shard.SlotMapEvent)) {
	t.Helper()
	sz := startSlotZeroCluster(t, "r11ms")
	rc, c, key, from, to := sz.rc, sz.c, sz.key, sz.owner, sz.other
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// Slots 0 and 1 (both from's: a master's slots are one range) move
	// to to; the client does not know yet.
	for _, slot := range []int{0, 1} {
		_, err := redistest.MoveSlot(ctx, slot, from, to, rc.Masters(), redistest.SlotMoveOptions{})
		require.NoError(t, err, "slot %d", slot)
	}
	require.Empty(t, sz.recorded(), "nothing moved in the client's view yet")

	return c, key, func() (map[int]int, []shard.SlotMapEvent) {
		events := sz.recorded()
		moved := map[int]int{} // slot: times reported moved
		for _, ev := range events {
			for _, m := range ev.Moves {
				assert.Equal(t, from.Addr, m.From.Addr, "%+v", ev)
				assert.Equal(t, to.Addr, m.To.Addr, "%+v", ev)
				for _, r := range m.Ranges {
					for s := r.Start; s <= r.End; s++ {
						moved[s]++
					}
				}
			}
		}
		return moved, events
	}
}
