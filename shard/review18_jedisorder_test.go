package shard_test

import (
	"fmt"
	"testing"

	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// review18JedisReversed is a jedis config of n named shards of weight 4
// (160*4 points each) listed in reverse natural order, so that TopologyID
// has to find out whether their order breaks a tie.
func review18JedisReversed(n int, keyHash string) shard.Config {
	shards := make([]ring.Shard, n)
	for i := range shards {
		k := n - i
		shards[i] = ring.Shard{Name: fmt.Sprintf("node-%d", k), Addr: fmt.Sprintf("10.0.%d.%d:6379", k>>8, k&255), Weight: 4}
	}
	return shard.Config{Shards: shards, Hash: ring.Jedis, KeyHash: keyHash}
}

// TopologyID of a jedis config whose named shards are out of natural
// order has to know whether two of the ring's points collide, which takes
// the ring's points (640,000 here: over 7 MB); Config.String shows a
// migration's old topology by its ID and is printed in logs, so asking
// again for the ID of the same config must not build the ring again. The
// ID itself is the same every time.
func TestReview18JedisTopologyIDIsNotRebuilt(t *testing.T) {
	for _, kh := range []string{"", "md5"} {
		cfg := review18JedisReversed(1000, kh)
		first := shard.TopologyID(cfg)
		from := cfg
		withMigration := shard.Config{Shards: cfg.Shards, Hash: cfg.Hash, KeyHash: kh, Migration: &shard.Migration{From: &from}}
		_ = withMigration.String()
		var again string
		bytes := review18Allocated(func() {
			for range 10 {
				again = shard.TopologyID(cfg)
				_ = withMigration.String()
			}
		})
		if again != first {
			t.Fatalf("key hash %q: TopologyID changed from %s to %s", kh, first, again)
		}
		if per := bytes / 20; per > 1<<20 {
			t.Errorf("key hash %q: TopologyID and Config.String of a config already seen allocate %d bytes a call: the ring is built every time", kh, per)
		}
	}
}

func BenchmarkReview18JedisTopologyID(b *testing.B) {
	cfg := review18JedisReversed(1000, "")
	from := cfg
	withMigration := shard.Config{Shards: cfg.Shards, Hash: cfg.Hash, Migration: &shard.Migration{From: &from}}
	b.Run("TopologyID", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			shard.TopologyID(cfg)
		}
	})
	b.Run("String", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = withMigration.String()
		}
	})
}
