package ring

import (
	"math/rand/v2"
	"testing"
	"unsafe"
)

// The bucket index finds exactly what a plain binary search finds, for
// every algorithm and key hash, at bucket edges and beyond the key space.
func TestBucketIndexMatchesBinarySearch(t *testing.T) {
	shards := []Shard{
		{Name: "a", Addr: "10.0.0.1:6379", Weight: 1},
		{Name: "b", Addr: "10.0.0.2:6379", Weight: 3},
		{Name: "c", Addr: "10.0.0.3:6379", Weight: 2},
	}
	configs := []Config{
		{Algorithm: Murmur3},
		{Algorithm: Jedis},
		{Algorithm: Jedis, KeyHash: "md5"},
		{Algorithm: JedisLegacy},
	}
	for _, h := range []string{"fnv1a_64", "md5", "crc16", "crc32", "crc32a", "murmur", "jenkins", "hsieh", "one_at_a_time", "fnv1_32"} {
		configs = append(configs, Config{Algorithm: Ketama, KeyHash: h})
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, cfg := range configs {
		cfg.Shards = shards
		r, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		lo, span := r.kh.keySpace()
		probes := []uint64{0, 1, lo, lo - 1, lo + span, lo + span - 1, ^uint64(0), 1 << 63, 1 << 32, 1 << 16}
		for _, p := range r.points {
			probes = append(probes, p, p-1, p+1)
		}
		for b := range r.index.start {
			edge := lo + uint64(b)<<r.index.shift
			probes = append(probes, edge, edge-1, edge+1)
		}
		for i := 0; i < 200000; i++ {
			probes = append(probes, rng.Uint64(), lo+rng.Uint64N(max(span, 1<<16)), uint64(rng.Uint32()))
		}
		if r.index.owners == nil {
			t.Fatalf("%s/%s: no owners table for a small ring", cfg.Algorithm, cfg.KeyHash)
		}
		for _, p := range probes {
			want := r.searchFrom(p)
			if got := r.index.search(r.points, p); got != want {
				t.Fatalf("%s/%s: search(%#x) = %d, binary search says %d", cfg.Algorithm, cfg.KeyHash, p, got, want)
			}
			if want == len(r.points) {
				want = 0
			}
			if o := r.index.owner(p); o >= 0 && o != r.owners[want] {
				t.Fatalf("%s/%s: owner(%#x) = %d, binary search says %d", cfg.Algorithm, cfg.KeyHash, p, o, r.owners[want])
			}
		}
	}
}

// The owners table answers nearly every lookup of a ring small enough to
// have one, and stays within 1 MiB: a table that fell back to searching,
// or outgrew a core's cache, would slow every lookup down.
func TestOwnersTableAnswersMostLookups(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct {
		alg    Algorithm
		shards int
	}{
		{Murmur3, 3}, {Murmur3, 10}, {Jedis, 3}, {Jedis, 100}, {Ketama, 10}, {Ketama, 100},
	} {
		r := mustNew(t, Config{Algorithm: tc.alg, Shards: shardsN(tc.shards)})
		if r.index.owners == nil {
			t.Fatalf("%s, %d shards: no owners table", tc.alg, tc.shards)
		}
		if size := len(r.index.owners) * int(unsafe.Sizeof(bucketOwner{})); size > 1<<20 {
			t.Errorf("%s, %d shards: owners table of %d bytes, want at most 1 MiB", tc.alg, tc.shards, size)
		}
		lo, span := r.kh.keySpace()
		const lookups = 100_000
		answered := 0
		for range lookups {
			p := rng.Uint64()
			if span != 0 {
				p = lo + rng.Uint64N(span)
			}
			if r.index.owner(p) >= 0 {
				answered++
			}
		}
		if answered < lookups*90/100 {
			t.Errorf("%s, %d shards: the owners table answers %d of %d lookups, want at least 90%%", tc.alg, tc.shards, answered, lookups)
		}
	}
}
