package ring

import (
	"errors"
	"fmt"
	"slices"
	"testing"
)

var (
	fuzzAlgorithms = []Algorithm{Murmur3, Jedis, JedisLegacy, Ketama, Modula}
	fuzzHashes     = map[Algorithm][]string{
		Murmur3:     {"murmur3"},
		Jedis:       {"murmur", "md5"},
		JedisLegacy: {"murmur", "md5"},
		Ketama: {"one_at_a_time", "md5", "crc16", "crc32", "crc32a", "fnv1_64", "fnv1a_64",
			"fnv1_32", "fnv1a_32", "hsieh", "murmur", "jenkins"},
	}
	fuzzTags = []string{"none", "cluster", "jedis", "{}", "$$", "a:"}
	// fuzzRings caches, by configuration, two rings built separately from
	// it; fuzz workers run inputs one at a time, so no locking is needed.
	fuzzRings = map[string][2]*Ring{}
)

func init() { fuzzHashes[Modula] = fuzzHashes[Ketama] }

// fuzzRing returns two rings built independently from the configuration
// selected by the fuzz parameters.
func fuzzRing(t *testing.T, alg, hash, tag, shards uint8) [2]*Ring {
	a := fuzzAlgorithms[int(alg)%len(fuzzAlgorithms)]
	hs := fuzzHashes[a]
	cfg := Config{
		Algorithm: a,
		KeyHash:   hs[int(hash)%len(hs)],
		Tag:       fuzzTags[int(tag)%len(fuzzTags)],
		Shards:    shardsN(1 + int(shards)%12),
	}
	for i := range cfg.Shards {
		if shards&0x80 != 0 && i%2 == 0 {
			cfg.Shards[i].Name = fmt.Sprintf("shard-%d", i)
		}
		cfg.Shards[i].Weight = 1 + (i*int(shards))%3
	}
	id := fmt.Sprint(cfg)
	if r, ok := fuzzRings[id]; ok {
		return r
	}
	var pair [2]*Ring
	for i := range pair {
		r, err := New(cfg)
		if err != nil {
			t.Fatalf("New(%+v): %v", cfg, err)
		}
		pair[i] = r
	}
	fuzzRings[id] = pair
	return pair
}

func FuzzLocate(f *testing.F) {
	f.Add([]byte("user:1000"), uint8(0), uint8(0), uint8(1), uint8(9))
	f.Add([]byte("{user1000}.following"), uint8(1), uint8(1), uint8(2), uint8(0x83))
	f.Add([]byte(""), uint8(3), uint8(6), uint8(0), uint8(2))
	f.Add([]byte("\x80\xff{\xc2\x85}"), uint8(4), uint8(9), uint8(3), uint8(5))
	f.Fuzz(func(t *testing.T, key []byte, alg, hash, tag, shards uint8) {
		pair := fuzzRing(t, alg, hash, tag, shards)
		r := pair[0]
		orig := slices.Clone(key)
		i := r.LocateBytes(key)
		if i < 0 || i >= r.Len() {
			t.Fatalf("index %d out of range [0, %d)", i, r.Len())
		}
		if !slices.Equal(key, orig) {
			t.Fatal("LocateBytes modified the key")
		}
		if j := r.Locate(string(key)); j != i {
			t.Fatalf("Locate %d, LocateBytes %d", j, i)
		}
		if j := r.LocateBytes(key); j != i {
			t.Fatalf("not deterministic: %d then %d", i, j)
		}
		// A ring built separately from the same configuration agrees.
		if j := pair[1].LocateBytes(key); j != i {
			t.Fatalf("second ring says %d, first %d", j, i)
		}
	})
}

func FuzzParseShards(f *testing.F) {
	f.Add("127.0.0.1:6381:2 shard-a,127.0.0.1:6382:1 shard-b")
	f.Add("127.0.0.1:6379")
	f.Add("[::1]:6379:3 v6, redis:6380")
	f.Add("h:11211,h:11212 h")
	f.Add("h:1:0")
	f.Add("h:1,,")
	f.Fuzz(func(t *testing.T, list string) {
		shards, err := ParseShards(list)
		if err != nil {
			if shards != nil || !errors.Is(err, ErrBadShardList) {
				t.Fatalf("ParseShards(%q) = %v, %v", list, shards, err)
			}
			return
		}
		if len(shards) == 0 {
			t.Fatal("accepted an empty list")
		}
		total := 0
		for _, s := range shards {
			if s.Weight < 1 || s.Weight > MaxWeight || validateAddr(s.Addr) != nil {
				t.Fatalf("accepted a bad shard %+v", s)
			}
			total += s.Weight
		}
		again, err := ParseShards(FormatShards(shards))
		if err != nil || !slices.Equal(again, shards) {
			t.Fatalf("round trip %q -> %q: %v, %v", list, FormatShards(shards), again, err)
		}
		for _, alg := range fuzzAlgorithms {
			if total > 64 {
				// Keep the fuzzer fast: only check that the point limit is
				// enforced before any work.
				if alg == Murmur3 && total*Murmur3PointsPerWeight > MaxPoints {
					if _, err := New(Config{Algorithm: alg, Shards: shards}); !errors.Is(err, ErrTooManyPoints) {
						t.Fatalf("%s: %v, want ErrTooManyPoints", alg, err)
					}
				}
				continue
			}
			r, err := New(Config{Algorithm: alg, Shards: shards})
			if alg == Ketama && (errors.Is(err, ErrBadWeight) || errors.Is(err, ErrBadShard) || errors.Is(err, ErrDuplicateShard)) ||
				alg == Modula && errors.Is(err, ErrDuplicateShard) {
				continue // twemproxy-only limits: tiny weights, long or clashing continuum names
			}
			if err != nil {
				t.Fatalf("%s: accepted list %q gives no ring: %v", alg, list, err)
			}
			if i := r.Locate(list); i < 0 || i >= len(shards) {
				t.Fatalf("%s: index %d", alg, i)
			}
		}
	})
}
