package ring

import (
	"fmt"
	"runtime"
	"slices"
	"testing"
)

// A ring whose points are shared among goroutines by point, not by shard,
// comes out as the plain definition gives it whatever the number of
// goroutines, when one shard holds most of the points (split among all of
// them), when it is the only shard, and when the goroutines' shares end
// inside shards of every kind: unnamed, named, jedis-legacy named, and
// murmur3 shards, built by murmur3Ring and the general way (its regions
// made to overflow).
func TestReview18BuildSplitsLargeShards(t *testing.T) {
	big := 1000 // 160,000 jedis points; murmur3 shards have 1,024 a unit of weight
	if raceDetector {
		big = 400
	}
	mixed := []Shard{
		{Addr: "10.0.0.1:6379", Weight: 3},
		{Name: "huge", Addr: "10.0.0.2:6379", Weight: big},
		{Addr: "10.0.0.3:6379", Weight: big / 3},
		{Name: "small", Addr: "10.0.0.4:6379", Weight: 1},
		{Name: "mid", Addr: "10.0.0.5:6379", Weight: big / 2},
	}
	cases := []struct {
		alg    Algorithm
		hash   string
		shards []Shard
	}{
		{Jedis, "md5", []Shard{{Name: "only", Addr: "10.0.0.1:6379", Weight: big}}},
		{Jedis, "", []Shard{{Addr: "10.0.0.1:6379", Weight: big}}},
		{Jedis, "", mixed},
		{Jedis, "md5", mixed},
		{JedisLegacy, "", mixed},
		{Murmur3, "", []Shard{{Name: "only", Addr: "10.0.0.1:6379", Weight: 100}}},
		{Murmur3, "", []Shard{{Name: "only", Addr: "10.0.0.1:6379", Weight: 100}, {Addr: "10.0.0.2:6379", Weight: 2}}},
		{Murmur3, "", []Shard{{Addr: "10.0.0.1:6379", Weight: 1}, {Name: "b", Addr: "10.0.0.2:6379", Weight: 80}, {Addr: "10.0.0.3:6379", Weight: 3}, {Name: "d", Addr: "10.0.0.4:6379", Weight: 40}}},
	}
	defer func(m float64, p int) { murmur3Margin = m; runtime.GOMAXPROCS(p) }(murmur3Margin, runtime.GOMAXPROCS(0))
	for _, c := range cases {
		for _, margin := range []float64{8, -4} { // -4: every region overflows, murmur3 rings are built the general way
			if margin < 0 && c.alg != Murmur3 {
				continue
			}
			murmur3Margin = margin
			review18CheckSplitBuild(t, c.alg, c.hash, c.shards)
		}
	}
}

// review18CheckSplitBuild checks the ring of shards against the reference
// for several numbers of goroutines.
func review18CheckSplitBuild(t *testing.T, alg Algorithm, hash string, shards []Shard) {
	t.Helper()
	r, err := New(Config{Algorithm: alg, KeyHash: hash, Shards: shards})
	if err != nil {
		t.Fatalf("%s/%s: %v", alg, hash, err)
	}
	ref := newReferenceRing(t, alg, r.kh, shards)
	for _, procs := range []int{1, 2, 3, 4, 7} {
		runtime.GOMAXPROCS(procs)
		got, err := New(Config{Algorithm: alg, KeyHash: hash, Shards: shards})
		if err != nil {
			t.Fatalf("%s/%s, %d goroutines: %v", alg, hash, procs, err)
		}
		if !slices.Equal(got.points, ref.pos) || !slices.Equal(got.owners, ref.own) {
			t.Fatalf("%s/%s, %d shards, %d goroutines, margin %v: the points differ from the reference's", alg, hash, len(shards), procs, murmur3Margin)
		}
	}
}

// forEachShard hands every point to exactly one call, with its shard and
// its number within the shard, however the points are shared out.
func TestReview18ForEachShardCoversEveryPointOnce(t *testing.T) {
	defer func(p int) { runtime.GOMAXPROCS(p) }(runtime.GOMAXPROCS(0))
	shards := []Shard{{Weight: 1}, {Weight: 700}, {Weight: 0}, {Weight: 1}, {Weight: 2}, {Weight: 300}, {Weight: 1}, {Weight: 0}}
	const perWeight = 160
	total := 0
	for _, s := range shards {
		total += s.Weight * perWeight
	}
	for _, procs := range []int{1, 2, 3, 5, 8} {
		runtime.GOMAXPROCS(procs)
		pts := newRingPoints(total)
		for i := range pts.own {
			pts.own[i] = -1
		}
		forEachShard(shards, perWeight, pts, func(i, first int, pos []uint64, _ *[]byte) {
			for n := range pos {
				pos[n] += uint64(i)<<32 | uint64(first+n+1)
			}
		})
		at := 0
		for i, s := range shards {
			for n := range s.Weight * perWeight {
				if want := uint64(i)<<32 | uint64(n+1); pts.pos[at] != want || pts.own[at] != int32(i) {
					t.Fatalf("%d goroutines: point %d is %s of shard %d, want point %d of shard %d", procs, at, fmt.Sprintf("%#x", pts.pos[at]), pts.own[at], n, i)
				}
				at++
			}
		}
	}
}
