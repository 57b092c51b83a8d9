package ring

import (
	"encoding/binary"
	"slices"
	"sort"
	"testing"
)

// fuzzPositions turns fuzz bytes into ring positions: 8 bytes each,
// narrowed by mode to a 64-, 32- or 16-bit key space or to a handful of
// values (so that ties and crowded buckets are common), and owners that
// cycle through 5 shards.
func fuzzPositions(data []byte, mode uint8) ([]uint64, []int32) {
	var pos []uint64
	var own []int32
	for i := 0; i+8 <= len(data); i += 8 {
		p := binary.LittleEndian.Uint64(data[i:])
		switch mode % 5 {
		case 1:
			p &= 1<<32 - 1
		case 2:
			p &= 1<<16 - 1
		case 3:
			p = p % 7 << 60
		case 4:
			p = signBit | p&(1<<32-1) // Jedis's md5 positions
		}
		pos, own = append(pos, p), append(own, int32(data[i]%5))
	}
	return pos, own
}

// sortRing agrees with a stable comparison sort, for every tie rule.
func FuzzSortRing(f *testing.F) {
	f.Add([]byte("0123456789abcdef0123456789abcdefxxxxxxxx"), uint8(0))
	f.Add([]byte("aaaaaaaaaaaaaaaabbbbbbbbaaaaaaaa"), uint8(3))
	f.Add(make([]byte, 64), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, mode uint8) {
		pos, own := fuzzPositions(data, mode)
		labels := make([]Shard, 5)
		for i := range labels {
			labels[i] = Shard{Name: string(rune('a' + i))}
		}
		want := referenceSort(pos, own)
		for rule, tie := range map[string]tiePolicy{"first": tieFirst, "last": tieLast, "smallest": tieSmallestLabel(labels)} {
			wantPos, wantOwn := want[rule].pos, want[rule].own
			gotPos, gotOwn := sortRing(slices.Clone(pos), slices.Clone(own), tie)
			if !slices.Equal(gotPos, wantPos) || !slices.Equal(gotOwn, wantOwn) {
				t.Fatalf("%s: got %x %v, want %x %v", rule, gotPos, gotOwn, wantPos, wantOwn)
			}
		}
	})
}

// The bucket index and its owners table find, for any sorted points and
// key space, the owner a binary search finds: at every point, next to it,
// at the ends of the key space and at the probes the input adds.
func FuzzBucketIndex(f *testing.F) {
	f.Add([]byte("0123456789abcdef0123456789abcdefxxxxxxxx"), uint8(0), []byte("probe..."))
	f.Add([]byte("aaaaaaaaaaaaaaaabbbbbbbbaaaaaaaa"), uint8(3), []byte{})
	f.Add([]byte("0123456789abcdef"), uint8(4), []byte("\xff\xff\xff\xff\xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, data []byte, mode uint8, extra []byte) {
		pos, own := fuzzPositions(data, mode)
		if len(pos) == 0 {
			return
		}
		points, owners := sortRing(pos, own, tieFirst)
		var lo, span uint64 // the key spaces of the key hashes
		switch mode % 5 {
		case 1:
			span = 1 << 32
		case 2:
			span = 1 << 16
		case 4:
			lo, span = signBit, 1<<32
		}
		idx := newBucketIndex(points, lo, span).withOwners(points, owners)
		probes := []uint64{0, 1, ^uint64(0), lo, lo - 1, lo + span, lo + span - 1}
		for _, p := range points {
			probes = append(probes, p, p-1, p+1)
		}
		for i := 0; i+8 <= len(extra); i += 8 {
			probes = append(probes, binary.LittleEndian.Uint64(extra[i:]))
		}
		for _, p := range probes {
			want := sort.Search(len(points), func(i int) bool { return points[i] >= p })
			if got := idx.search(points, p); got != want {
				t.Fatalf("search(%#x) = %d, binary search says %d", p, got, want)
			}
			if want == len(points) {
				want = 0
			}
			if o := idx.owner(p); o >= 0 && o != owners[want] {
				t.Fatalf("owner(%#x) = %d, binary search says %d", p, o, owners[want])
			}
		}
	})
}
