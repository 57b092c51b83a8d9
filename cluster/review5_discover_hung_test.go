package cluster

import (
	"context"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
)

// TestReview5DiscoverSkipsAHungSeed: the first seed hangs (paused: it
// accepts the connection and never answers), the second answers at once.
// Discover with its default dialer and a context without a deadline must
// skip the hung seed, as it skips one that fails, and return the table
// from the second; it waited on the first for as long as the context
// allowed, that is for ever. (The test's context ends after 30 s so that a
// failure does not hang the suite.)
func TestReview5DiscoverSkipsAHungSeed(t *testing.T) {
	redistest.Require(t)
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{NodeTimeout: time.Minute})
	masters := rc.Masters()
	if len(masters) != 3 {
		t.Fatalf("%d masters, want 3", len(masters))
	}
	hung := masters[0]
	if err := hung.Pause(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hung.Resume() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	table, err := Discover(ctx, []string{hung.Addr, masters[1].Addr}, nil)
	if err != nil {
		t.Fatalf("the second seed answers: %v", err)
	}
	if got := len(table.Masters()); got != 3 {
		t.Fatalf("%d masters in the table, want 3", got)
	}
}
