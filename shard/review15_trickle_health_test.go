package shard_test

import (
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// A node that answers every command but sends its PONG a byte every
// 500 ms (3.5 s a PING) is too slow for a health timeout of 300 ms: the
// health check gives up on each PING after the health timeout, whatever
// the pool's read timeout, and the node is marked down after
// FailureLimit such checks, not after FailureLimit whole PONGs.
func TestReview15TrickledPongMarksTheNodeDownWithinTheHealthTimeout(t *testing.T) {
	srv := redistest.StartTB(t, redistest.Options{})
	px := redistest.StartTrickleProxy(t, srv.Addr, 500*time.Millisecond, func(cmd string, _ []byte) bool { return cmd == "PING" })
	const healthTimeout = 300 * time.Millisecond
	cfg := shard.Config{
		Pool:   pool.Options{DialTimeout: time.Second, ReadTimeout: 20 * time.Second, WriteTimeout: time.Second},
		Health: shard.HealthOptions{Interval: 50 * time.Millisecond, FailureLimit: 2, Timeout: healthTimeout},
		Shards: []ring.Shard{{Name: "s0", Addr: px.Addr, Weight: 1}},
	}
	start := time.Now()
	c := newClient(t, cfg)
	// Two checks of 300 ms and the interval between them take 650 ms;
	// two whole PONGs would take 7 s.
	const bound = 3 * time.Second
	if !waitUntil(bound, func() bool { return c.Stats().Nodes[0].Down }) {
		st := c.Stats().Nodes[0]
		t.Fatalf("the trickling node is not down %v after the start (%d errors)", time.Since(start).Round(time.Millisecond), st.Errors)
	}
	t.Logf("down after %v", time.Since(start).Round(time.Millisecond))
}
