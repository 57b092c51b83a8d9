package shard_test

import (
	"context"
	"errors"
	"testing"

	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// A ring shard without an address (and no Sentinel shard to resolve it)
// is a bad shard, as one whose address lacks a port is: its error
// matches ring.ErrBadShard next to shard.ErrBadConfig, so a caller that
// tells a bad shard from other config faults does not miss it.
func TestReview20RingShardWithoutAddressIsABadShard(t *testing.T) {
	for _, tc := range []struct {
		name   string
		shards []ring.Shard
	}{
		{"no address", []ring.Shard{{Name: "a", Weight: 1}}},
		{"second without address", []ring.Shard{{Name: "a", Addr: "127.0.0.1:6379", Weight: 1}, {Name: "b", Weight: 1}}},
		{"no port", []ring.Shard{{Name: "a", Addr: "127.0.0.1", Weight: 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := shard.New(context.Background(), shard.Config{Shards: tc.shards})
			if c != nil {
				c.Close()
				t.Fatal("a client over a shard without an address")
			}
			if !errors.Is(err, shard.ErrBadConfig) || !errors.Is(err, ring.ErrBadShard) {
				t.Fatalf("New = %v, want an error matching ErrBadConfig and ring.ErrBadShard", err)
			}
		})
	}
}
