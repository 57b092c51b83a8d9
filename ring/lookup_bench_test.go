package ring

import (
	"cmp"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// spreadKeys returns 65,536 distinct random 16-character keys: enough that
// lookups land all over a ring's tables, as the keys of a large keyspace
// do, instead of on the few entries a short list of keys keeps in cache.
func spreadKeys() []string {
	rng := rand.New(rand.NewPCG(3, 4))
	keys := make([]string, 1<<16)
	for i := range keys {
		keys[i] = fmt.Sprintf("%016x", rng.Uint64())
	}
	return keys
}

// BenchmarkLocateSpread looks up spread keys in rings of 3 to 1,000 equal
// shards.
func BenchmarkLocateSpread(b *testing.B) {
	keys := spreadKeys()
	for _, alg := range []Algorithm{Murmur3, Jedis, Ketama} {
		for _, n := range []int{3, 10, 100, 1000} {
			r := mustNew(b, Config{Algorithm: alg, Shards: shardsN(n)})
			b.Run(fmt.Sprintf("%s/shards=%d", alg, n), func(b *testing.B) {
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					r.Locate(keys[i&(len(keys)-1)])
					i++
				}
			})
		}
	}
}

// locateWith is Ring.locate for a murmur3 ring with index idx in place of
// the ring's own.
func locateWith(r *Ring, idx *bucketIndex, key string) int {
	pos := murmur3Sum64(bytesOf(r.tag.Tag(key)))
	if o := idx.owner(pos); o >= 0 {
		return int(o)
	}
	i := idx.search(r.points, pos)
	if i == len(r.points) {
		i = 0
	}
	return int(r.owners[i])
}

// BenchmarkIndexSizing compares murmur3 lookups of spread keys through the
// ring's index (four to eight buckets per point up to 2^14 points, about
// one beyond) with indexes of two and four times fewer buckets (and owners
// tables that much smaller), side by side: each operation times the same
// 100 lookups (an MGET's worth) with each index in turn, the order
// rotating, so that all see the same load, and the medians over the
// operations are reported as ns per lookup (a stretch during which the
// process lost its core says nothing about lookups).
func BenchmarkIndexSizing(b *testing.B) {
	keys := spreadKeys()
	const chunk = 100
	for _, n := range []int{3, 10, 100, 1000} {
		r := mustNew(b, Config{Algorithm: Murmur3, Shards: shardsN(n)})
		k := bits.Len(uint(len(r.index.start) - 1))
		indexes := []*bucketIndex{&r.index}
		names := []string{"ring"}
		for _, fewer := range []int{1, 2} {
			idx := newBucketIndexBits(r.points, 0, 0, k-1-fewer).withOwners(r.points, r.owners)
			indexes = append(indexes, &idx)
			names = append(names, fmt.Sprintf("div%d", 1<<fewer))
		}
		for _, key := range keys[:4096] {
			for v, idx := range indexes {
				if got, want := locateWith(r, idx, key), r.Locate(key); got != want {
					b.Fatalf("%d shards, key %q: index %s says %d, ring %d", n, key, names[v], got, want)
				}
			}
		}
		b.Run(fmt.Sprintf("shards=%d", n), func(b *testing.B) {
			times := make([][]time.Duration, len(indexes))
			i, sink := 0, 0
			for b.Loop() {
				for turn := range indexes {
					v := (i/chunk + turn) % len(indexes)
					t0 := time.Now()
					for j := range chunk {
						sink += locateWith(r, indexes[v], keys[(i+j)&(len(keys)-1)])
					}
					times[v] = append(times[v], time.Since(t0))
				}
				i += chunk
			}
			for v, name := range names {
				b.ReportMetric(float64(median(times[v]))/chunk, name+"-ns/lookup")
			}
			b.ReportMetric(0, "ns/op")
			if sink < 0 {
				b.Fatal(sink)
			}
		})
	}
}

// median returns the median of xs, which it sorts.
func median[T cmp.Ordered](xs []T) T {
	slices.Sort(xs)
	return xs[len(xs)/2]
}
