package ring

import "math/bits"

// bucketIndex narrows the binary search of a lookup. The key space is cut
// into a power-of-two number of equal buckets (one to eight per point);
// start[b] is the first point at or after the start of bucket b, and
// start[len-1] the first point at or after the end of the key space. A key
// in bucket b then needs only a search of points[start[b]:start[b+1]+1],
// usually one or two points, instead of the whole ring: two cache misses
// rather than a dozen.
type bucketIndex struct {
	lo    uint64   // the first position of the key space
	shift uint     // a position's bucket is (pos - lo) >> shift
	start []uint32 // len = buckets + 1
	// owners answers most lookups from one entry: the owner of a bucket
	// without points, or of either side of a bucket's single point. Nil
	// for very large rings, where it would not fit in cache anyway.
	owners []bucketOwner
}

// bucketOwner is the answer for one bucket: keys at or below split belong
// to below, keys above it to above. A bucket that holds several points has
// split at the top of the key space and below < 0: it must be searched.
type bucketOwner struct {
	split        uint64
	below, above int32
}

// ownerBucketBits bounds the owners table at 2^16 entries (1 MiB).
const (
	ownerBucketBits = 16
	maxOwnerBuckets = 1 << ownerBucketBits
)

// maxIndexBits bounds the index at 2^20 buckets (4 MiB).
const maxIndexBits = 20

// newBucketIndex indexes sorted points over the key space [lo, lo+span)
// (span 0 meaning 2^64).
func newBucketIndex(points []uint64, lo, span uint64) bucketIndex {
	spanBits := 64
	if span != 0 {
		spanBits = bits.Len64(span) - 1
	}
	// Small rings get four to eight buckets per point, so that nearly
	// every bucket holds at most one point and the owners table answers
	// alone; large rings, whose table would outgrow the cache, about one.
	k := bits.Len(uint(len(points)))
	if k+2 <= ownerBucketBits {
		k += 2
	}
	return newBucketIndexBits(points, lo, span, min(k, maxIndexBits, spanBits))
}

// newBucketIndexBits indexes sorted points over the key space [lo,
// lo+span) with 2^k buckets, without an owners table.
func newBucketIndexBits(points []uint64, lo, span uint64, k int) bucketIndex {
	spanBits := 64
	if span != 0 {
		spanBits = bits.Len64(span) - 1
	}
	n := 1 << k
	idx := bucketIndex{lo: lo, shift: uint(spanBits - k), start: make([]uint32, n+1)}
	// Count the points of each bucket into start[b+1], then sum the
	// counts up: start[b] is then the number of points before bucket b.
	// Points outside the key space are counted nowhere, since no key lies
	// there. Sorted points make the counting a walk through start,
	// without a branch to mispredict.
	first := 0 // the points before the key space
	for first < len(points) && points[first] < lo {
		first++
	}
	for _, p := range points[first:] {
		if span != 0 && p-lo >= span {
			break // this point and all after it lie beyond the key space
		}
		idx.start[(p-lo)>>idx.shift+1]++
	}
	idx.start[0] = uint32(first)
	for b := 1; b <= n; b++ {
		idx.start[b] += idx.start[b-1]
	}
	return idx
}

// withOwners adds the one-entry answers for a ring whose points belong to
// owners.
func (idx bucketIndex) withOwners(points []uint64, owners []int32) bucketIndex {
	n := len(idx.start) - 1
	if n > maxOwnerBuckets || len(points) == 0 {
		return idx
	}
	next := func(i int) int32 { // owner of the first point at index >= i, wrapping
		if i >= len(points) {
			return owners[0]
		}
		return owners[i]
	}
	idx.owners = make([]bucketOwner, n)
	for b := 0; b < n; b++ {
		i, j := int(idx.start[b]), int(idx.start[b+1])
		switch j - i {
		case 0:
			idx.owners[b] = bucketOwner{split: ^uint64(0), below: next(i), above: next(i)}
		case 1:
			idx.owners[b] = bucketOwner{split: points[i], below: owners[i], above: next(i + 1)}
		default:
			idx.owners[b] = bucketOwner{split: ^uint64(0), below: -1}
		}
	}
	return idx
}

// owner answers a lookup from the owners table when it can, else -1.
func (idx *bucketIndex) owner(pos uint64) int32 {
	if idx.owners == nil || pos < idx.lo {
		return -1
	}
	b := (pos - idx.lo) >> idx.shift
	if b >= uint64(len(idx.owners)) {
		return -1
	}
	e := &idx.owners[b]
	if pos <= e.split {
		return e.below
	}
	return e.above
}

// search returns the index of the first point >= pos, or len(points).
func (idx *bucketIndex) search(points []uint64, pos uint64) int {
	i, j := 0, len(points)
	if d := pos - idx.lo; pos >= idx.lo {
		if b := d >> idx.shift; b < uint64(len(idx.start)-1) {
			i, j = int(idx.start[b]), int(idx.start[b+1])
		} else {
			i = int(idx.start[len(idx.start)-1])
		}
	}
	// A bucket holds one point or two on average: a scan beats a binary
	// search's mispredicted branches. Buckets are rarely long, but a
	// crowded one (or the tail beyond the key space) is searched.
	if j-i > 8 {
		for i < j {
			mid := int(uint(i+j) >> 1)
			if points[mid] < pos {
				i = mid + 1
			} else {
				j = mid
			}
		}
		return i
	}
	for i < j && points[i] < pos {
		i++
	}
	return i
}
