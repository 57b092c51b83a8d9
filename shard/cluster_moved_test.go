package shard

import (
	"context"
	"testing"

	"github.com/shardis/shardis/cluster"
)

// TestStaleMovedNeverUndoesARefresh: a MOVED is applied to the slot map
// the client had when it read the redirect. When a refresh installed a
// newer map meanwhile, the table derived from the older one must not
// replace it — neither by the fast path (moveSlot) nor by a full install
// (installOver) — or every other slot the refresh moved would route to
// its old master again.
func TestStaleMovedNeverUndoesARefresh(t *testing.T) {
	srv := startTopologyServer(t)
	before := newBigTopology(scaleMasters, scaleReplicas, srv.addr())
	after := newBigTopology(scaleMasters, scaleReplicas, srv.addr())
	for s := 0; s < cluster.SlotCount; s += 16 {
		after.owner[s] = (before.owner[s] + 1) % scaleMasters
	}
	srv.set(before)
	c := newScaleClient(t, srv)
	ctx := context.Background()
	if err := c.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	stale := c.cl().state.Load()

	srv.set(after)
	if err := c.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	fresh := c.cl().state.Load()
	if fresh == stale {
		t.Fatal("the refresh installed nothing")
	}
	// A MOVED for slot 32, applied to the stale map.
	derived := stale.table.WithSlotOwner(32, after.addr(after.owner[32], -1))
	if c.cl().moveSlot(stale, derived, 32) {
		t.Error("moveSlot installed a table derived from a replaced state")
	}
	if c.cl().installOver(stale, derived) {
		t.Error("installOver installed a table derived from a replaced state")
	}
	if c.cl().state.Load() != fresh {
		t.Fatal("the refreshed state was replaced")
	}
	// applyMoved looks again and finds the refreshed map already right.
	c.applyMoved(16, after.addr(after.owner[16], -1))
	tb := c.cl().Table()
	for s := 0; s < cluster.SlotCount; s += 16 {
		if got, want := tb.Master(s).Addr, after.addr(after.owner[s], -1); got != want {
			t.Fatalf("slot %d served by %s, want %s", s, got, want)
		}
	}
}
