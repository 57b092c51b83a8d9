package shard_test

import (
	"errors"
	"testing"

	"github.com/shardis/shardis/shard"
)

// TestReview7ZeroRingRouterDoesNotPanic: a RingRouter not built by
// NewRingRouter (a zero value) dereferenced its missing ring state and
// panicked in Route, Index and IndexBytes. It now routes nothing, with
// ErrNoNodes, as a router whose shards are all ejected does.
func TestReview7ZeroRingRouterDoesNotPanic(t *testing.T) {
	var rr shard.RingRouter
	if n, err := rr.Route("k"); !errors.Is(err, shard.ErrNoNodes) {
		t.Errorf("Route = %v, %v; want ErrNoNodes", n, err)
	}
	if i, err := rr.Index("k"); !errors.Is(err, shard.ErrNoNodes) || i != -1 {
		t.Errorf("Index = %d, %v; want -1, ErrNoNodes", i, err)
	}
	if i, err := rr.IndexBytes([]byte("k")); !errors.Is(err, shard.ErrNoNodes) || i != -1 {
		t.Errorf("IndexBytes = %d, %v; want -1, ErrNoNodes", i, err)
	}
	if nodes := rr.Nodes(); len(nodes) != 0 {
		t.Errorf("Nodes = %v, want none", nodes)
	}
	if rr.Ejected(0) {
		t.Error("Ejected(0) = true for a router without nodes")
	}
	if err := rr.Eject(0); !errors.Is(err, shard.ErrBadConfig) {
		t.Errorf("Eject(0) = %v, want ErrBadConfig", err)
	}
	if err := rr.Restore(0); !errors.Is(err, shard.ErrBadConfig) {
		t.Errorf("Restore(0) = %v, want ErrBadConfig", err)
	}
	if r := rr.Ring(); r != nil && r.Len() != 0 {
		t.Errorf("Ring() = %v, want no shard", r)
	}
}
