package shard

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/shardis/shardis/ring"
)

// Subscriptions re-place their names each time the ring's watchers are
// told: only an ejection or a restore that changes the ring tells them.
func TestReview15EjectTellsWatchersOfChangesOnly(t *testing.T) {
	rr, err := NewRingRouter(ring.Config{Shards: []ring.Shard{
		{Addr: "127.0.0.1:1", Weight: 1}, {Addr: "127.0.0.1:2", Weight: 1}, {Addr: "127.0.0.1:3", Weight: 1},
	}})
	if err != nil {
		t.Fatal(err)
	}
	var told atomic.Int32
	defer rr.watch.add(func() { told.Add(1) })()
	steps := []struct {
		what string
		do   func() error
		want int32 // notifications so far
	}{
		{"restore a node in the ring", func() error { return rr.Restore(1) }, 0},
		{"eject", func() error { return rr.Eject(1) }, 1},
		{"eject again", func() error { return rr.Eject(1) }, 1},
		{"restore", func() error { return rr.Restore(1) }, 2},
		{"restore again", func() error { return rr.Restore(1) }, 2},
		{"eject a node that does not exist", func() error { return rr.Eject(7) }, 2},
	}
	for _, s := range steps {
		err := s.do()
		if s.what == "eject a node that does not exist" {
			if !errors.Is(err, ErrBadConfig) {
				t.Fatalf("%s: err %v, want ErrBadConfig", s.what, err)
			}
		} else if err != nil {
			t.Fatalf("%s: %v", s.what, err)
		}
		if got := told.Load(); got != s.want {
			t.Fatalf("after %s: watchers told %d times, want %d", s.what, got, s.want)
		}
	}
}
