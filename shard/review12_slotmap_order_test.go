package shard_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview12SlotMapEventsEndAtTheMapInUse: a MOVED reply and a refresh
// that change the same slot each reported the change it made, after
// installing it and without any order between them: a slot moved from A
// to B and back to A, the MOVED for A -> B applied first, the refresh's
// B -> A installed and reported while the MOVED had not reported yet,
// then the MOVED's A -> B. A program that keeps a view of the slot map by
// applying the events as they come ended with the slot at B, while the
// client routes it to A (and so does the cluster). Events now come in the
// order of the maps they lead to, each from the map the one before ended
// at, so the view applied in arrival order is the map in use.
func TestReview12SlotMapEventsEndAtTheMapInUse(t *testing.T) {
	sz := startSlotZeroCluster(t, "r12so")
	rc, c, key, a, b := sz.rc, sz.c, sz.key, sz.owner, sz.other
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	_, err := redistest.MoveSlot(ctx, 0, a, b, rc.Masters(), redistest.SlotMoveOptions{})
	require.NoError(t, err)

	// A GET meets the MOVED (slot 0 at b); once the client applied it and
	// before it reports it, slot 0 goes back to a and a refresh installs
	// that.
	var once atomic.Bool
	var back atomic.Value
	shard.AfterMoved(func(cc *shard.Client) {
		if cc != c || !once.CompareAndSwap(false, true) {
			return
		}
		if _, err := redistest.MoveSlot(ctx, 0, b, a, rc.Masters(), redistest.SlotMoveOptions{}); err != nil {
			back.Store("move back: " + err.Error())
			return
		}
		if err := c.Refresh(ctx); err != nil {
			back.Store("refresh: " + err.Error())
			return
		}
		back.Store("ok")
	})
	defer shard.AfterMoved(nil)
	v, err := redis.String(c.Do(ctx, "GET", key))
	require.NoError(t, err)
	require.Equal(t, "v", v)
	require.True(t, once.Load(), "the GET met a MOVED")
	require.Equal(t, "ok", back.Load())

	// The client routes slot 0 to a: a GET needs no redirect.
	v, err = redis.String(c.Do(ctx, "GET", key))
	require.NoError(t, err)
	require.Equal(t, "v", v)

	// The program's view: slot 0's master, applying the events as they
	// came (none at all is right too: the slot is back where it was).
	view := func() (string, []shard.SlotMapEvent) {
		got := sz.recorded()
		at := a.Addr
		for i, ev := range got {
			for _, m := range ev.Moves {
				for _, r := range m.Ranges {
					if r.Start <= 0 && 0 <= r.End {
						assert.Equal(t, at, m.From.Addr, "event %d moves slot 0 from where the events before left it: %v", i, got)
						at = m.To.Addr
					}
				}
			}
		}
		return at, got
	}
	at, got := view()
	assert.Equal(t, a.Addr, at, "the events, applied in the order they came, end with slot 0 where it is: %v", got)

	// Later changes are still told: slot 0 moves to b once more, and a
	// GET meets the MOVED.
	_, err = redistest.MoveSlot(ctx, 0, a, b, rc.Masters(), redistest.SlotMoveOptions{})
	require.NoError(t, err)
	v, err = redis.String(c.Do(ctx, "GET", key))
	require.NoError(t, err)
	require.Equal(t, "v", v)
	waitFor(t, 10*time.Second, "the MOVED's event", func() bool {
		at, _ := view()
		return at == b.Addr
	})
}
