package bench

import (
	"fmt"
	"strings"
	"testing"

	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/ring"
)

// sinkIndex keeps the compiler from dropping the lookups.
var sinkIndex int

// lookupKeys are the keys every lookup benchmark cycles through: 4096
// distinct 16-byte keys such as "user:00000042:pf".
var lookupKeys = Keys("user", 1<<12)

func newRing(b *testing.B, alg ring.Algorithm, shards []ring.Shard) *ring.Ring {
	r, err := ring.New(ring.Config{Algorithm: alg, Shards: shards})
	if err != nil {
		b.Fatal(err)
	}
	return r
}

// BenchmarkLookup compares the cost of finding a key's shard: the rings of
// package ring against the baselines, for 10 and 100 named shards of weight
// 1. Every case calls its router through a func value, so all pay the same
// indirect call.
func BenchmarkLookup(b *testing.B) {
	for _, n := range []int{10, 100} {
		shards := ringShards(n, true)
		names := shardNames(n)
		cases := []struct {
			name  string
			build func(b *testing.B) func(string) int
		}{
			{"ring-murmur3", func(b *testing.B) func(string) int { return newRing(b, ring.Murmur3, shards).Locate }},
			{"ring-jedis", func(b *testing.B) func(string) int { return newRing(b, ring.Jedis, shards).Locate }},
			{"ring-ketama", func(b *testing.B) func(string) int { return newRing(b, ring.Ketama, shards).Locate }},
			{"rendezvous", func(b *testing.B) func(string) int { return NewRendezvous(names).Locate }},
			{"rendezvous-pershard", func(b *testing.B) func(string) int { return NewRendezvousPerShard(names).Locate }},
			{"treemap", func(b *testing.B) func(string) int {
				tm, err := NewTreeMap(shards)
				if err != nil {
					b.Fatal(err)
				}
				return tm.Locate
			}},
			{"jump", func(b *testing.B) func(string) int { return func(k string) int { return Jump(k, n) } }},
		}
		for _, c := range cases {
			b.Run(fmt.Sprintf("%s/shards=%d", c.name, n), func(b *testing.B) {
				locate := c.build(b)
				keys := lookupKeys
				mask := len(keys) - 1
				b.ReportAllocs()
				s := 0
				for i := 0; b.Loop(); i++ {
					s += locate(keys[i&mask])
				}
				sinkIndex = s
			})
		}
	}
}

// BenchmarkSlot measures the Redis Cluster hash slot of a 16-byte key and of
// a 1 KiB key, neither with a hash tag.
func BenchmarkSlot(b *testing.B) {
	for _, c := range []struct {
		name string
		key  string
	}{
		{"16B", "user:00000042:pf"},
		{"1KiB", strings.Repeat("k", 1024)},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			s := 0
			for b.Loop() {
				s += cluster.Slot(c.key)
			}
			sinkIndex = s
		})
	}
}
