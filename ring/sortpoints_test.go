package ring

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSortByPosSeq checks the bucket sort against slices.SortFunc on
// positions spread like hashes, confined to 32 bits (ketama), crowded
// into a few values (ties, whose insertion order must survive) and
// skewed into one bucket.
func TestSortByPosSeq(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	gens := []struct {
		name string
		pos  func(i int) uint64
	}{
		{"64-bit", func(int) uint64 { return rng.Uint64() }},
		{"32-bit", func(int) uint64 { return uint64(rng.Uint32()) }},
		{"few values", func(int) uint64 { return uint64(rng.IntN(7)) << 40 }},
		{"skewed", func(i int) uint64 {
			if i%2 == 0 {
				return uint64(rng.IntN(1000))
			}
			return rng.Uint64()
		}},
		{"sorted", func(i int) uint64 { return uint64(i) * 977 }},
		{"reversed", func(i int) uint64 { return ^uint64(i) }},
	}
	for _, g := range gens {
		for _, n := range []int{0, 1, 255, 256, 257, 5000, 100_000} {
			pts := make([]point, n)
			for i := range pts {
				pts[i] = point{pos: g.pos(i), owner: int32(i % 13), seq: int32(i)} // seq is the index, as sortPoints sets it
			}
			want := slices.Clone(pts)
			slices.SortFunc(want, comparePoints)
			sortByPosSeq(pts)
			if !slices.Equal(pts, want) {
				t.Errorf("%s, %d points: order differs from slices.SortFunc", g.name, n)
			}
		}
	}
}
