package ring_test

import (
	"errors"
	"fmt"

	"github.com/shardis/shardis/ring"
)

// Every error of New and ParseShards wraps one of the package's sentinels,
// so callers can tell the causes apart with errors.Is.
func ExampleParseShards_errors() {
	for _, list := range []string{
		"",
		"10.0.0.1",
		"10.0.0.1:6379:0",
		"10.0.0.1:6379 a,10.0.0.2:6379 a",
	} {
		_, err := ring.ParseShards(list)
		fmt.Println(errors.Is(err, ring.ErrBadShardList), errors.Is(err, ring.ErrNoShards),
			errors.Is(err, ring.ErrBadWeight), errors.Is(err, ring.ErrDuplicateShard))
	}
	_, err := ring.New(ring.Config{Algorithm: "crc64", Shards: []ring.Shard{{Addr: "10.0.0.1:6379", Weight: 1}}})
	fmt.Println(errors.Is(err, ring.ErrUnknownAlgorithm))
	_, err = ring.New(ring.Config{Algorithm: ring.Jedis, KeyHash: "crc32", Shards: []ring.Shard{{Addr: "10.0.0.1:6379", Weight: 1}}})
	fmt.Println(errors.Is(err, ring.ErrUnknownHash))
	_, err = ring.New(ring.Config{Tag: "{", Shards: []ring.Shard{{Addr: "10.0.0.1:6379", Weight: 1}}})
	fmt.Println(errors.Is(err, ring.ErrBadTag))
	_, err = ring.New(ring.Config{Shards: []ring.Shard{{Addr: "no-port", Weight: 1}}})
	fmt.Println(errors.Is(err, ring.ErrBadShard))
	// A ring holds at most MaxPoints points: MaxWeight shards of weight
	// MaxWeight ask for far more.
	_, err = ring.New(ring.Config{Shards: []ring.Shard{{Addr: "10.0.0.1:6379", Weight: ring.MaxWeight}}})
	fmt.Println(errors.Is(err, ring.ErrTooManyPoints), ring.MaxPoints)
	// Output:
	// true true false false
	// true false false false
	// true false true false
	// true false false true
	// true
	// true
	// true
	// true
	// true 4194304
}

// Points, Len and LocateBytes; a shard of weight w has w times the points
// per weight of its algorithm.
func ExampleRing_Points() {
	shards, _ := ring.ParseShards("10.0.0.1:6379:2 a,10.0.0.2:6379:1 b")
	for _, alg := range []ring.Algorithm{ring.Murmur3, ring.Jedis} {
		r, err := ring.New(ring.Config{Algorithm: alg, Shards: shards})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(alg, r.Len(), r.Points(), r.LocateBytes([]byte("user:1")) == r.Locate("user:1"))
	}
	fmt.Println(3*ring.Murmur3PointsPerWeight, 3*ring.JedisPointsPerWeight)
	// Output:
	// murmur3 2 3072 true
	// jedis 2 480 true
	// 3072 480
}

// FormatShards writes a list back in the syntax ParseShards reads, weights
// spelled out.
func ExampleFormatShards() {
	shards, _ := ring.ParseShards("10.0.0.1:6379 a, 10.0.0.2:6379:3")
	fmt.Println(ring.FormatShards(shards))
	// Output:
	// 10.0.0.1:6379:1 a,10.0.0.2:6379:3
}

// DiffKeys measures movement on your own keys rather than the whole key
// space.
func ExampleDiffKeys() {
	shards, _ := ring.ParseShards("10.0.0.1:6379,10.0.0.2:6379,10.0.0.3:6379")
	before, _ := ring.New(ring.Config{Shards: shards[:2]})
	after, _ := ring.New(ring.Config{Shards: shards})
	keys := make([]string, 10000)
	for i := range keys {
		keys[i] = fmt.Sprintf("user:%d", i)
	}
	m := ring.DiffKeys(before, after, keys)
	fmt.Printf("about a third moved: %v, all to the new shard: %v, keys %d\n", m.Moved > 0.28 && m.Moved < 0.39, m.BetweenSurvivors == 0, m.Keys)
	// Output:
	// about a third moved: true, all to the new shard: true, keys 10000
}

// WithDefaults fills in what a config leaves unset, without building a
// ring.
func ExampleConfig_WithDefaults() {
	for _, c := range []ring.Config{{}, {Algorithm: ring.Jedis}, {Algorithm: ring.Ketama, Tag: "{}"}} {
		d, err := c.WithDefaults()
		fmt.Println(d.Algorithm, d.KeyHash, d.Tag, err)
	}
	_, err := ring.Config{Algorithm: ring.Jedis, KeyHash: "crc32"}.WithDefaults()
	fmt.Println(errors.Is(err, ring.ErrUnknownHash))
	// Output:
	// murmur3 murmur3 cluster <nil>
	// jedis murmur none <nil>
	// ketama fnv1a_64 {} <nil>
	// true
}

// KetamaPointCounts shows which ketama weights place keys alike: only the
// point counts matter, not the weights' proportions as written.
func ExampleKetamaPointCounts() {
	for _, w := range [][]int{{1, 1, 1}, {2, 2, 2}, {1, 2}, {100, 201}, {99, 101}} {
		shards := make([]ring.Shard, len(w))
		for i := range w {
			shards[i] = ring.Shard{Addr: fmt.Sprintf("10.0.0.%d:6379", i+1), Weight: w[i]}
		}
		fmt.Println(w, ring.KetamaPointCounts(shards))
	}
	// Output:
	// [1 1 1] [160 160 160]
	// [2 2 2] [160 160 160]
	// [1 2] [104 212]
	// [100 201] [104 212]
	// [99 101] [156 160]
}
