package ring

import (
	"math"
	"math/bits"
)

// murmur3Ring returns the sorted points of a murmur3 ring and their owners,
// equal positions collapsed to the shard with the smallest label: what
// sortRing makes of murmur3Points, computed with less memory traffic for
// large rings, where moving millions of points through memory takes most
// of the time.
//
// Murmur3 positions are uniform over 64 bits, so each of the goroutines
// that hash the points knows in advance about how many of its points will
// have each top digit: it writes every point straight to a region of its
// own for that digit, sized for the expected count and a margin of many
// standard deviations, which spares sortRing's sequential copy of the
// points and its first pass over them. The second pass sorts each digit's
// regions, the goroutines' one after the other. Should a region overflow
// (it takes positions that are not random), the ring is built the general
// way.
func murmur3Ring(shards []Shard) ([]uint64, []int32, error) {
	total, err := totalWeight(shards, Murmur3PointsPerWeight, MaxPoints)
	if err != nil {
		return nil, nil, err
	}
	n := total * Murmur3PointsPerWeight
	if n < parallelPoints {
		return murmur3RingGeneral(shards)
	}
	runs := pointRuns(shards, Murmur3PointsPerWeight, n)
	const digits = 1 << sortBits1
	k := min(max(bits.Len(uint(n))-1, sortBits1), maxSortBits)
	shift1, shift2 := uint(64-sortBits1), uint(64-k)
	mask2 := uint64(1)<<(k-sortBits1) - 1

	// Goroutine w's region for digit d is spos[base[w]+d*size[w]:][:size[w]].
	// The goroutine writes its shards (its parts of them) one after the
	// other, so a region holds a run of points per shard: shard i's points
	// of digit d start at starts[w][i-runs[w].from][d] in the region (and
	// end where the next shard's start, or at the region's fill), which
	// spares storing an owner per point.
	base, size := make([]int, len(runs)), make([]int, len(runs))
	sum := 0
	for w, r := range runs {
		mean := float64(r.points) / digits
		base[w], size[w] = sum, max(int(mean+murmur3Margin*math.Sqrt(mean)+64), 0)
		sum += digits * size[w]
	}
	spos := make([]uint64, sum)
	fill := make([][digits]int32, len(runs))
	starts := make([][][digits]int32, len(runs))
	overflow := make([]bool, len(runs))
	parallel(len(runs), func(w int) {
		var chunk [1024]uint64
		b, c, f := base[w], int32(size[w]), &fill[w]
		r := runs[w]
		starts[w] = make([][digits]int32, r.to-r.from)
		r.each(shards, Murmur3PointsPerWeight, func(i, from, count int) {
			starts[w][i-r.from] = *f
			if overflow[w] {
				return
			}
			prefix := shards[i].Label() + "-"
			for first := from; first < from+count; first += len(chunk) {
				pos := chunk[:min(len(chunk), from+count-first)]
				murmur3Labels(pos, prefix, first)
				for _, p := range pos {
					d := p >> shift1
					j := f[d]
					if j == c {
						overflow[w] = true
						return
					}
					spos[b+int(d)*int(c)+int(j)] = p
					f[d] = j + 1
				}
			}
		})
	})
	for _, o := range overflow {
		if o {
			return murmur3RingGeneral(shards)
		}
	}

	// Digit d's points go to pos[start[d]:start[d+1]].
	var start [digits + 1]int
	for d := range digits {
		start[d+1] = start[d]
		for w := range runs {
			start[d+1] += int(fill[w][d])
		}
	}
	pos, own := make([]uint64, n), make([]int32, n)
	parallel(len(runs), func(w int) {
		count := make([]uint32, mask2+2)
		segs := make([]segment, len(runs))
		for v, r := range runs {
			segs[v] = segment{first: int32(r.from), ends: make([]int32, r.to-r.from)}
		}
		for d := digits * w / len(runs); d < digits*(w+1)/len(runs); d++ {
			for v, r := range runs {
				at, end := base[v]+d*size[v], fill[v][d]
				seg := &segs[v]
				seg.pos = spos[at : at+int(end)]
				for i := r.from + 1; i < r.to; i++ {
					seg.ends[i-1-r.from] = starts[v][i-r.from][d]
				}
				seg.ends[len(seg.ends)-1] = end
			}
			sortRun(pos[start[d]:start[d+1]], own[start[d]:start[d+1]], segs, count, shift2, mask2)
		}
	})
	pos, own = collapseTies(pos, own, tieSmallestLabel(shards))
	return pos, own, nil
}

// murmur3Margin is the room each region of murmur3Ring leaves above the
// expected number of points, in standard deviations: at 8, a region
// overflows about once in 10^15 regions. Tests lower it to make regions
// overflow.
var murmur3Margin = 8.0

// murmur3RingGeneral is murmur3Ring the general way: every point hashed
// in list order, then sorted by sortRing.
func murmur3RingGeneral(shards []Shard) ([]uint64, []int32, error) {
	pts, err := murmur3Points(shards)
	if err != nil {
		return nil, nil, err
	}
	pos, own := sortRing(pts.pos, pts.own, tieSmallestLabel(shards))
	return pos, own, nil
}
