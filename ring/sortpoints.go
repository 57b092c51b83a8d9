package ring

import (
	"cmp"
	"slices"
)

// radixBits is the digit width of sortByPosSeq: 2,048 buckets per pass,
// few enough that every bucket's write position stays in cache.
const radixBits = 11

// sortByPosSeq sorts points by position, then by seq, given points whose
// seq is their index (insertion order): a stable sort by position alone
// then gives exactly that order. For large rings it is a least
// significant digit radix sort (six passes of 11 bits, fewer when the
// positions have fewer bits, such as ketama's 32), linear in the number
// of points: a ring of 1,000 weighted shards has millions of points, and
// a comparison sort of them took most of New's time. It needs a scratch
// copy of the points.
func sortByPosSeq(pts []point) {
	if len(pts) < 4096 {
		slices.SortFunc(pts, comparePoints)
		return
	}
	var used uint64 // the bits that differ between positions
	for _, p := range pts {
		used |= p.pos ^ pts[0].pos
	}
	src, dst := pts, make([]point, len(pts))
	var count [1 << radixBits]int
	for shift := uint(0); shift < 64; shift += radixBits {
		if (used>>shift)&(1<<radixBits-1) == 0 {
			continue // every point has the same digit here
		}
		clear(count[:])
		for i := range src {
			count[(src[i].pos>>shift)&(1<<radixBits-1)]++
		}
		sum := 0
		for d, n := range count {
			count[d] = sum
			sum += n
		}
		for i := range src {
			d := (src[i].pos >> shift) & (1<<radixBits - 1)
			dst[count[d]] = src[i]
			count[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &pts[0] {
		copy(pts, src)
	}
}

func comparePoints(a, b point) int {
	if c := cmp.Compare(a.pos, b.pos); c != 0 {
		return c
	}
	return cmp.Compare(a.seq, b.seq)
}
