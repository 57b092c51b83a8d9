package ring

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// referenceSort is the plain definition of sortRing: a stable comparison
// sort by position, then one point per position, owned by the first, the
// last or the smallest owner of its run (the three tie rules), for each
// rule.
func referenceSort(pos []uint64, own []int32) map[string]sortedRing {
	idx := make([]int, len(pos))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return pos[idx[a]] < pos[idx[b]] })
	out := map[string]sortedRing{}
	for k := 0; k < len(idx); {
		j := k
		first, last, smallest := own[idx[k]], own[idx[k]], own[idx[k]]
		for ; j < len(idx) && pos[idx[j]] == pos[idx[k]]; j++ {
			last, smallest = own[idx[j]], min(smallest, own[idx[j]])
		}
		for rule, o := range map[string]int32{"first": first, "last": last, "smallest": smallest} {
			r := out[rule]
			r.pos, r.own = append(r.pos, pos[idx[k]]), append(r.own, o)
			out[rule] = r
		}
		k = j
	}
	return out
}

// sortedRing is the result of sorting a ring's points.
type sortedRing struct {
	pos []uint64
	own []int32
}

// TestSortRing checks the radix sort against referenceSort on positions
// spread like hashes, confined to 32 or 16 bits (ketama, crc16), crowded
// into a few values (ties, whose insertion order decides the owner),
// crowded into one top digit (the fallback for long runs), and already
// sorted or reversed, at sizes around every change of digit width.
func TestSortRing(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	gens := []struct {
		name string
		pos  func(i int) uint64
	}{
		{"64-bit", func(int) uint64 { return rng.Uint64() }},
		{"32-bit", func(int) uint64 { return uint64(rng.Uint32()) }},
		{"16-bit", func(int) uint64 { return uint64(rng.Uint32N(1 << 16)) }},
		{"jedis md5", func(int) uint64 { return signBit | uint64(rng.Uint32()) }},
		{"few values", func(int) uint64 { return uint64(rng.IntN(7)) << 40 }},
		{"one value", func(int) uint64 { return 42 }},
		{"dense", func(int) uint64 { return uint64(rng.IntN(1000)) }},
		{"skewed", func(i int) uint64 {
			if i%2 == 0 {
				return uint64(rng.IntN(1 << 20))
			}
			return rng.Uint64()
		}},
		{"one top digit", func(int) uint64 { return 1<<63 | rng.Uint64()>>30 }},
		{"sorted", func(i int) uint64 { return uint64(i) * 977 }},
		{"reversed", func(i int) uint64 { return ^uint64(i) }},
		{"extremes", func(i int) uint64 { return []uint64{0, ^uint64(0), 1, 1 << 63}[i%4] }},
	}
	// The owner numbers are small so that ties between different owners
	// are common; "smallest" stands for tieSmallestLabel with labels in
	// owner order.
	labels := make([]Shard, 13)
	for i := range labels {
		labels[i] = Shard{Name: fmt.Sprintf("s%02d", i)}
	}
	rules := map[string]tiePolicy{"first": tieFirst, "last": tieLast, "smallest": tieSmallestLabel(labels)}
	for gi, g := range gens {
		for _, n := range []int{0, 1, 2, 3, 255, 256, 257, 4095, 4096, 5000, 1 << 15, 100_000, 1 << 18} {
			if raceDetector && n > 5000 && (n != 100_000 || gi%3 != 0) {
				continue // keep -race quick; 100,000 points are still sorted by several goroutines
			}
			pos := make([]uint64, n)
			own := make([]int32, n)
			for i := range pos {
				pos[i], own[i] = g.pos(i), int32(rng.IntN(len(labels)))
			}
			want := referenceSort(pos, own)
			for rule, tie := range rules {
				wantPos, wantOwn := want[rule].pos, want[rule].own
				gotPos, gotOwn := sortRing(slices.Clone(pos), slices.Clone(own), tie)
				if len(gotPos) != len(wantPos) || len(gotOwn) != len(wantPos) {
					t.Fatalf("%s, %d points, %s: %d positions and %d owners, want %d", g.name, n, rule, len(gotPos), len(gotOwn), len(wantPos))
				}
				for i := range wantPos {
					if gotPos[i] != wantPos[i] || gotOwn[i] != wantOwn[i] {
						t.Fatalf("%s, %d points, %s: point %d is %#x of %d, want %#x of %d",
							g.name, n, rule, i, gotPos[i], gotOwn[i], wantPos[i], wantOwn[i])
					}
				}
			}
		}
	}
}
