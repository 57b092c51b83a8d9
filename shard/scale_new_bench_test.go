package shard

import (
	"context"
	"fmt"
	"testing"

	"github.com/shardis/shardis/ring"
)

// BenchmarkScaleNewRing measures New for a ring of 1,000 shards of weights
// 1 to 4 (murmur3, the default placement): no I/O in ring mode, so what it
// costs is the ring's build, which New does once (the ring that Validate
// built is the one the client routes by).
func BenchmarkScaleNewRing(b *testing.B) {
	shards := make([]ring.Shard, 1000)
	for i := range shards {
		shards[i] = ring.Shard{Name: fmt.Sprintf("s%d", i), Addr: fmt.Sprintf("127.0.0.1:%d", 10000+i), Weight: 1 + i%4}
	}
	cfg := Config{Shards: shards, Health: HealthOptions{Interval: -1}}
	b.ReportAllocs()
	for b.Loop() {
		c, err := New(context.Background(), cfg)
		if err != nil {
			b.Fatal(err)
		}
		c.Close()
	}
}
