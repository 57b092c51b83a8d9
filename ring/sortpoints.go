package ring

import (
	"cmp"
	"math/bits"
	"slices"
)

// Digit widths of sortRing's two passes. The first pass spreads points
// over at most 2^8 runs, few enough that every run's write position stays
// in cache; the second sorts each run, small enough to stay in cache
// itself, by up to 2^14 more digits.
const (
	sortBits1   = 8
	maxSortBits = 22
)

// maxRun bounds the points that share their top digits before sortRing
// stops trusting insertion sort with them: positions are hashes, so runs
// hold one or two points, but sortRing must stay fast on any input.
const maxRun = 32

// tiePolicy picks, among the owners of points with the same position in
// insertion order, the one that keeps the position.
type tiePolicy func(run []int32) int32

// tieFirst keeps the point inserted first (twemproxy ketama with a stable
// qsort: the leftmost equal point is found first).
func tieFirst(run []int32) int32 { return run[0] }

// tieLast keeps the point inserted last (Jedis: TreeMap.put overwrites).
func tieLast(run []int32) int32 { return run[len(run)-1] }

// tieSmallestLabel keeps the point of the shard with the bytewise smallest
// label, so that placement does not depend on the order of the shard list.
func tieSmallestLabel(shards []Shard) tiePolicy {
	return func(run []int32) int32 {
		best := run[0]
		for _, o := range run[1:] {
			if shards[o].Label() < shards[best].Label() {
				best = o
			}
		}
		return best
	}
}

// sortRing sorts the points of a ring, at positions pos owned by own in
// insertion order, by position, keeping insertion order among equal
// positions, and collapses each run of equal positions to one point owned
// by the owner tie picks. It sorts in place and returns the shortened
// slices.
//
// It is a most significant digit radix sort, linear in the number of
// points: a ring of 1,000 weighted shards has millions of them. The
// first pass distributes the points by their top digit into a scratch
// copy; the second distributes each of those runs back by the next digit,
// which leaves about one point per value of the two digits, and an
// insertion sort finishes. Both passes and the insertion sort are stable.
func sortRing(pos []uint64, own []int32, tie tiePolicy) ([]uint64, []int32) {
	n := len(pos)
	if n == 0 {
		return pos, own
	}
	var used uint64 // the bits that differ between positions
	for _, p := range pos {
		used |= p ^ pos[0]
	}
	top := bits.Len64(used) // bits above top are the same in every position
	k := min(max(bits.Len(uint(n))-1, 1), maxSortBits, top)
	k1 := min(k, sortBits1)
	k2 := k - k1
	shift1, shift2 := uint(top-k1), uint(top-k)
	mask1, mask2 := uint64(1)<<k1-1, uint64(1)<<k2-1

	// Large rings are sorted by several goroutines: each counts and then
	// distributes its own stretch of the points in the first pass (the
	// stretches' points of one digit go one after the other, in stretch
	// order, which keeps the sort stable), and sorts its own digits in
	// the second.
	workers := sortWorkers(n)
	counts := make([][1 << sortBits1]int, workers)
	stretch := func(w int) (int, int) { return n * w / workers, n * (w + 1) / workers }
	parallel(workers, func(w int) {
		from, to := stretch(w)
		for _, p := range pos[from:to] {
			counts[w][(p>>shift1)&mask1]++
		}
	})
	var runs [1<<sortBits1 + 1]int // runs[d] is where the points of digit d start
	sum := 0
	for d := range 1 << sortBits1 {
		runs[d] = sum
		for w := range counts {
			counts[w][d], sum = sum, sum+counts[w][d] // where stretch w's points of digit d go
		}
	}
	runs[1<<sortBits1] = sum
	spos, sown := make([]uint64, n), make([]int32, n)
	parallel(workers, func(w int) {
		from, to := stretch(w)
		next := &counts[w]
		for i, p := range pos[from:to] {
			d := (p >> shift1) & mask1
			spos[next[d]], sown[next[d]] = p, own[from+i]
			next[d]++
		}
	})
	parallel(workers, func(w int) {
		count2 := make([]uint32, 1<<k2+1)
		segs := make([]segment, 1)
		for d := (1 << k1) * w / workers; d < (1<<k1)*(w+1)/workers; d++ {
			lo, hi := runs[d], runs[d+1]
			segs[0] = segment{pos: spos[lo:hi], own: sown[lo:hi]}
			sortRun(pos[lo:hi], own[lo:hi], segs, count2, shift2, mask2)
		}
	})
	return collapseTies(pos, own, tie)
}

// segment is a stretch of points for sortRun and their owners: own, one
// per point, or, when own is nil, runs of points by owner: the points
// before ends[0] belong to first, those before ends[1] to first+1, and so
// on (ends is non-decreasing and its last entry is len(pos)).
type segment struct {
	pos   []uint64
	own   []int32
	first int32
	ends  []int32
}

// sortRun sorts the points of segs, taken one after the other, into pos
// and own: by the digit (p >> shift) & mask, counted in count (one more
// entry than digits), then by insertion sort.
func sortRun(pos []uint64, own []int32, segs []segment, count []uint32, shift uint, mask uint64) {
	clear(count)
	for _, seg := range segs {
		for _, p := range seg.pos {
			count[(p>>shift)&mask+1]++
		}
	}
	longest := uint32(0)
	for d := 1; d < len(count); d++ {
		longest = max(longest, count[d])
		count[d] += count[d-1]
	}
	for _, seg := range segs {
		if seg.own != nil {
			segOwn := seg.own[:len(seg.pos)]
			for i, p := range seg.pos {
				d := (p >> shift) & mask
				pos[count[d]], own[count[d]] = p, segOwn[i]
				count[d]++
			}
			continue
		}
		o, k := seg.first, 0
		for i, p := range seg.pos {
			for int32(i) >= seg.ends[k] {
				k++
			}
			d := (p >> shift) & mask
			pos[count[d]], own[count[d]] = p, o+int32(k)
			count[d]++
		}
	}
	if longest > maxRun {
		stableSortRun(pos, own)
	} else {
		insertionSort(pos, own)
	}
}

// insertionSort sorts pos, and own along with it, stably: quick for the
// nearly sorted runs sortRing leaves.
func insertionSort(pos []uint64, own []int32) {
	for i := 1; i < len(pos); i++ {
		p, o := pos[i], own[i]
		j := i
		for j > 0 && pos[j-1] > p {
			pos[j], own[j] = pos[j-1], own[j-1]
			j--
		}
		pos[j], own[j] = p, o
	}
}

// stableSortRun sorts pos, and own along with it, stably, whatever the
// input: the fallback for runs that are crowded on a few top digits.
func stableSortRun(pos []uint64, own []int32) {
	type entry struct {
		pos uint64
		own int32
	}
	run := make([]entry, len(pos))
	for i := range run {
		run[i] = entry{pos[i], own[i]}
	}
	slices.SortStableFunc(run, func(a, b entry) int { return cmp.Compare(a.pos, b.pos) })
	for i, e := range run {
		pos[i], own[i] = e.pos, e.own
	}
}

// collapseTies replaces each run of equal positions in sorted pos by one
// point owned by tie's pick, in place.
func collapseTies(pos []uint64, own []int32, tie tiePolicy) ([]uint64, []int32) {
	i := 1
	for i < len(pos) && pos[i] != pos[i-1] {
		i++
	}
	if i >= len(pos) {
		return pos, own // no ties, the usual case
	}
	out := i - 1 // the first run of equal positions starts here
	for i = out; i < len(pos); {
		j := i + 1
		for j < len(pos) && pos[j] == pos[i] {
			j++
		}
		o := own[i]
		if j-i > 1 {
			o = tie(own[i:j])
		}
		pos[out], own[out] = pos[i], o
		out++
		i = j
	}
	return pos[:out], own[:out]
}
