package main

import (
	"fmt"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
)

// docs/pubsub.md: subscribe prints messages until interrupted, and Ctrl-C
// exits with status 0. Interrupted while it was still subscribing (its
// server slow to confirm, frozen here), it exited 1 with "context
// canceled" instead.
func TestReview6SubscribeInterruptedWhileSubscribingExitsZero(t *testing.T) {
	srv := redistest.StartTB(t, redistest.Options{})
	cfg := writeConfig(t, fmt.Sprintf("shards: [{addr: %q, name: a}]\npool: {read_timeout: 60s}\n", srv.Addr))
	if err := srv.Pause(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Resume() })
	_, errOut, stop := startSubscribe("--config", cfg, "news")
	if code := stop(); code != 0 {
		t.Errorf("interrupted while subscribing: exit %d, want 0\nstderr:\n%s", code, errOut.String())
	}
}
