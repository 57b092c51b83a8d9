package ring

import (
	"cmp"
	"crypto/md5"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"testing"

	"github.com/spaolacci/murmur3"
)

// referenceRing is the plain definition of a ring, written without any of
// New's machinery: every point's name formatted with fmt, hashed with
// spaolacci/murmur3 (murmur3), crypto/md5 (ketama) or the ring's key hash
// (jedis, whose hashes the golden vectors check), a stable comparison
// sort, the algorithm's tie rule, and a binary search per lookup.
type referenceRing struct {
	pos []uint64
	own []int32
}

func newReferenceRing(t *testing.T, alg Algorithm, kh keyHash, shards []Shard) referenceRing {
	t.Helper()
	type pt struct {
		pos uint64
		own int32
	}
	var pts []pt
	switch alg {
	case Murmur3:
		for i, s := range shards {
			for n := 0; n < s.Weight*1024; n++ {
				pts = append(pts, pt{murmur3.Sum64([]byte(fmt.Sprintf("%s-%d", s.Label(), n))), int32(i)})
			}
		}
	case Jedis, JedisLegacy:
		for i, s := range shards {
			for n := 0; n < s.Weight*160; n++ {
				name := fmt.Sprintf("SHARD-%d-NODE-%d", i, n)
				if s.Name != "" && alg == Jedis {
					name = fmt.Sprintf("%s*%d", s.Name, n)
				} else if s.Name != "" {
					name = fmt.Sprintf("%s*%d%d", s.Name, s.Weight, n)
				}
				pts = append(pts, pt{kh.position([]byte(name)), int32(i)})
			}
		}
	case Ketama:
		order, names, err := twemOrder(shards)
		if err != nil {
			t.Fatal(err)
		}
		total := 0
		for _, s := range shards {
			total += s.Weight
		}
		for _, i := range order {
			for h := 0; h < ketamaPointCount(shards[i].Weight, total, len(shards))/4; h++ {
				d := md5.Sum([]byte(fmt.Sprintf("%s-%d", names[i], h)))
				for w := 0; w < 4; w++ {
					pts = append(pts, pt{uint64(binary.LittleEndian.Uint32(d[4*w:])), int32(i)})
				}
			}
		}
	default:
		t.Fatalf("no reference for %s", alg)
	}
	slices.SortStableFunc(pts, func(a, b pt) int { return cmp.Compare(a.pos, b.pos) })
	var r referenceRing
	for k := 0; k < len(pts); {
		j, o := k, pts[k].own
		for ; j < len(pts) && pts[j].pos == pts[k].pos; j++ {
			switch {
			case alg == Jedis || alg == JedisLegacy: // the last one stays
				o = pts[j].own
			case alg == Murmur3 && shards[pts[j].own].Label() < shards[o].Label():
				o = pts[j].own
			}
		}
		r.pos, r.own = append(r.pos, pts[k].pos), append(r.own, o)
		k = j
	}
	return r
}

// owner returns the owner of position p: the first point at or after it,
// wrapping to the first point.
func (r referenceRing) owner(p uint64) int {
	i := sort.Search(len(r.pos), func(i int) bool { return r.pos[i] >= p })
	if i == len(r.pos) {
		i = 0
	}
	return int(r.own[i])
}

// referenceShards returns n shards, named or not, with weights from the
// given cycle.
func referenceShards(n int, named bool, weights ...int) []Shard {
	shards := make([]Shard, n)
	for i := range shards {
		shards[i] = Shard{Addr: fmt.Sprintf("10.%d.%d.%d:6379", i>>16&255, i>>8&255, i&255), Weight: weights[i%len(weights)]}
		if named {
			shards[i].Name = fmt.Sprintf("node-%04d", i)
		}
	}
	return shards
}

// New builds exactly the ring the plain definition gives, point for
// point, and every lookup agrees with a binary search of it: at every
// point, just before and after it, at both ends of the key space, at the
// edges of the index's buckets and at random positions and keys. Ring
// sizes cover the small rings of the golden vectors, the sizes at which
// the index and the sort change shape, the shared build of large rings,
// and a thousand weighted shards.
func TestRingMatchesReference(t *testing.T) {
	type ringCase struct {
		alg    Algorithm
		hash   string
		shards []Shard
	}
	var cases []ringCase
	for _, n := range []int{1, 2, 3, 5, 10, 33, 100} {
		for _, named := range []bool{false, true} {
			weights := []int{1}
			if named {
				weights = []int{1, 4, 2, 3}
			}
			shards := referenceShards(n, named, weights...)
			cases = append(cases,
				ringCase{Murmur3, "", shards},
				ringCase{Jedis, "", shards},
				ringCase{Jedis, "md5", shards},
				ringCase{JedisLegacy, "", shards},
				ringCase{Ketama, "", shards},
				ringCase{Ketama, "crc16", shards})
		}
	}
	large := 400 // a million murmur3 points, built by several goroutines
	if raceDetector {
		large = 100 // the race detector slows the reference down tenfold
	}
	cases = append(cases,
		ringCase{Murmur3, "", referenceShards(large, true, 1, 2, 3, 4)},
		ringCase{Jedis, "", referenceShards(large, false, 1, 2, 3, 4)},
		ringCase{Ketama, "", referenceShards(large, false, 1, 2, 3, 4)})
	rng := rand.New(rand.NewPCG(16, 16))
	keys := sampleKeys(2000)
	for _, c := range cases {
		name := fmt.Sprintf("%s/%s/%d shards", c.alg, c.hash, len(c.shards))
		r, err := New(Config{Algorithm: c.alg, KeyHash: c.hash, Shards: c.shards})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		ref := newReferenceRing(t, c.alg, r.kh, c.shards)
		if len(r.points) != len(ref.pos) || len(r.owners) != len(ref.pos) {
			t.Fatalf("%s: %d points and %d owners, the reference has %d points", name, len(r.points), len(r.owners), len(ref.pos))
		}
		for i := range ref.pos {
			if r.points[i] != ref.pos[i] || r.owners[i] != ref.own[i] {
				t.Fatalf("%s: point %d is %#x of shard %d, the reference's is %#x of shard %d",
					name, i, r.points[i], r.owners[i], ref.pos[i], ref.own[i])
			}
		}
		lo, span := r.kh.keySpace()
		probes := []uint64{0, 1, ^uint64(0), ^uint64(0) - 1, 1 << 63, lo, lo - 1, lo + span, lo + span - 1}
		for i := 0; i < len(ref.pos); i += 1 + len(ref.pos)/20000 {
			p := ref.pos[i]
			probes = append(probes, p, p-1, p+1)
		}
		for b := 0; b < len(r.index.start); b += 1 + len(r.index.start)/5000 {
			edge := lo + uint64(b)<<r.index.shift
			probes = append(probes, edge, edge-1, edge+1)
		}
		random := 20000
		if raceDetector {
			random = 2000
		}
		for range random {
			probes = append(probes, rng.Uint64(), lo+rng.Uint64N(max(span, 1<<16)))
		}
		for _, p := range probes {
			if got, want := r.owner(p), ref.owner(p); got != want {
				t.Fatalf("%s: position %#x goes to shard %d, the reference says %d", name, p, got, want)
			}
		}
		for _, k := range keys {
			if got, want := r.Locate(k), ref.owner(r.kh.position(r.tag.TagBytes([]byte(k)))); got != want && len(c.shards) > 1 {
				t.Fatalf("%s: key %q goes to shard %d, the reference says %d", name, k, got, want)
			}
		}
	}
}

// A large murmur3 ring comes out the same whether its points are hashed
// by one goroutine or several, and whether or not a region of
// murmur3Ring overflows and the ring is built the general way.
func TestMurmur3RingRegions(t *testing.T) {
	shards := referenceShards(60, true, 1, 2, 3, 4) // 153,600 points
	ref := newReferenceRing(t, Murmur3, khMurmur3, shards)
	defer func(m float64, p int) { murmur3Margin = m; runtime.GOMAXPROCS(p) }(murmur3Margin, runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 2, 3} {
		for _, margin := range []float64{8, -4} { // -4: every region overflows
			runtime.GOMAXPROCS(procs)
			murmur3Margin = margin
			pos, own, err := murmur3Ring(shards)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(pos, ref.pos) || !slices.Equal(own, ref.own) {
				t.Fatalf("%d goroutines, margin %v: the points differ from the reference's", procs, margin)
			}
		}
	}
}
