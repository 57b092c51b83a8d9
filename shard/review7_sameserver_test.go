package shard_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// TestReview7SameServerTwiceIsADuplicateShard: a ring listing one running
// server twice is refused by New whatever the spelling, but only the same
// address written twice matched ring.ErrDuplicateShard; two spellings of
// it (localhost and 127.0.0.1, [::1] and [0::1]) gave a plain ErrBadConfig,
// so code testing for the ring's sentinel missed them. Both now match
// ErrBadConfig and ring.ErrDuplicateShard, and the message names both
// entries.
func TestReview7SameServerTwiceIsADuplicateShard(t *testing.T) {
	srv := redistest.StartTB(t, redistest.Options{})
	port := strconv.Itoa(srv.Port)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The server itself serves under its first spelling.
	c, err := shard.New(ctx, shard.Config{Shards: []ring.Shard{{Addr: "127.0.0.1:" + port, Weight: 1}}, Health: shard.HealthOptions{Interval: -1}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Do(ctx, "SET", "review7:same", "1"); err != nil {
		t.Fatal(err)
	}
	c.Close()
	for _, p := range [][2]string{
		{"127.0.0.1:" + port, "127.0.0.1:" + port},
		{"localhost:" + port, "127.0.0.1:" + port},
		{"127.0.0.1:" + port, "[::ffff:127.0.0.1]:" + port},
		{"[::1]:" + port, "[0::1]:" + port},
	} {
		cfg := shard.Config{Shards: []ring.Shard{{Addr: p[0], Weight: 1, Name: "a"}, {Addr: p[1], Weight: 1, Name: "b"}}, Health: shard.HealthOptions{Interval: -1}}
		c, err := shard.New(ctx, cfg)
		if err == nil {
			c.Close()
			t.Errorf("New with %s and %s: accepted, want a duplicate shard", p[0], p[1])
			continue
		}
		if !errors.Is(err, shard.ErrBadConfig) || !errors.Is(err, ring.ErrDuplicateShard) {
			t.Errorf("New with %s and %s = %v, want ErrBadConfig and ring.ErrDuplicateShard", p[0], p[1], err)
		}
		if msg := err.Error(); !strings.Contains(msg, p[0]) || !strings.Contains(msg, p[1]) {
			t.Errorf("New with %s and %s: %q does not name both", p[0], p[1], msg)
		}
	}
}
