package ring

import (
	"math"
	"math/rand/v2"
)

// Movement says how much of the key space changes shard between two rings,
// for planning a resharding or comparing algorithms. Shards are matched by
// Label: a shard that keeps its label is the same shard in both rings,
// whatever its position in the list.
type Movement struct {
	// Moved is the fraction of keys (0..1) whose shard label differs.
	Moved float64
	// BetweenSurvivors is the part of Moved that goes from one shard to
	// another shard when both are present in both rings. Adding or removing
	// shards on a consistent ring moves keys only to added shards or away
	// from removed ones, so this stays 0 there.
	BetweenSurvivors float64
	// Exact reports that the figures are exact fractions of the key-hash
	// space rather than estimates from sample keys.
	Exact bool
	// Keys is the number of keys measured: len(keys) for DiffKeys, the
	// number of sample keys when Diff had to sample, 0 when Exact.
	Keys int
}

// diffSampleKeys is the number of keys Diff samples when it cannot compute
// the movement exactly (standard error below 0.001).
const diffSampleKeys = 1 << 18

// modulaPeriodLimit bounds the work of exact modula comparisons.
const modulaPeriodLimit = 1 << 22

// Diff returns the fraction of the key-hash space that changes owner from
// old to new. Keys are assumed to spread evenly over the values their hash
// can take (the whole 64-bit range for murmur3 and Jedis's MurmurHash64A,
// 2^32 values for MD5 under jedis and for most twemproxy hashes, 2^16 for
// crc16 and 2^15 for crc32).
//
// When both rings hash keys the same way (same key hash and tag rule) and
// both place points on a circle (murmur3, jedis, jedis-legacy, ketama), Diff
// merges the two sorted point lists and adds up, exactly, the arcs whose
// owner differs. When both are modula rings with the same key hash, the
// owner of hash h is slots[h mod n], which repeats every lcm(nOld, nNew)
// values: Diff counts exactly when that period (or the hash range itself)
// is at most 2^22, and otherwise reports the fraction over one full period,
// which is within lcm/2^32 of the exact value (Exact is then false). In
// every other case (different key hashes or tag rules, or modula against a
// circle) Diff measures 2^18 deterministic pseudo-random keys with DiffKeys.
//
// A nil ring, or the zero Ring, gives the zero Movement.
func Diff(old, new *Ring) Movement {
	if old == nil || new == nil || old.Len() == 0 || new.Len() == 0 {
		return Movement{}
	}
	sameHash := old.kh == new.kh && old.tag == new.tag
	switch {
	case sameHash && old.slots == nil && new.slots == nil:
		return diffPoints(old, new)
	case sameHash && old.slots != nil && new.slots != nil:
		return diffModula(old, new)
	}
	return DiffKeys(old, new, sampleKeys(diffSampleKeys))
}

// DiffKeys returns the fraction of keys whose shard label differs between
// old and new, measured on the given keys. No keys, a nil ring or the zero
// Ring give the zero Movement.
func DiffKeys(old, new *Ring, keys []string) Movement {
	if old == nil || new == nil || old.Len() == 0 || new.Len() == 0 || len(keys) == 0 {
		return Movement{}
	}
	ids := newLabelIDs(old, new)
	moved, between := 0, 0
	for _, k := range keys {
		a, b := ids.old[old.Locate(k)], ids.new[new.Locate(k)]
		if a != b {
			moved++
			if ids.survivor(a) && ids.survivor(b) {
				between++
			}
		}
	}
	n := float64(len(keys))
	return Movement{Moved: float64(moved) / n, BetweenSurvivors: float64(between) / n, Keys: len(keys)}
}

// labelIDs numbers the shard labels of two rings.
type labelIDs struct {
	old, new []int
	inOld    []bool // by id
	inNew    []bool
}

func newLabelIDs(old, new *Ring) labelIDs {
	seen := map[string]int{}
	id := func(label string) int {
		if i, ok := seen[label]; ok {
			return i
		}
		seen[label] = len(seen)
		return len(seen) - 1
	}
	var l labelIDs
	for _, s := range old.cfg.Shards {
		l.old = append(l.old, id(s.Label()))
	}
	for _, s := range new.cfg.Shards {
		l.new = append(l.new, id(s.Label()))
	}
	l.inOld = make([]bool, len(seen))
	l.inNew = make([]bool, len(seen))
	for _, i := range l.old {
		l.inOld[i] = true
	}
	for _, i := range l.new {
		l.inNew[i] = true
	}
	return l
}

// survivor reports whether label id is in both rings.
func (l labelIDs) survivor(id int) bool { return l.inOld[id] && l.inNew[id] }

// ownerAt returns the owner of the first point at index >= i, wrapping.
func ownerAt(r *Ring, i int) int {
	if len(r.cfg.Shards) == 1 {
		return 0
	}
	if i == len(r.points) {
		i = 0
	}
	return int(r.owners[i])
}

// diffPoints compares two circles that share a key hash. Between two
// consecutive points of either ring, every position has the same owner in
// both rings, so the hash range splits into arcs (prev, b] ending at each
// point b inside the range, plus one ending at the range's last value.
func diffPoints(old, new *Ring) Movement {
	ids := newLabelIDs(old, new)
	lo, span := old.kh.keySpace()
	hi := lo + span - 1 // span 0 means 2^64: hi wraps to the maximum
	i, j := old.searchFrom(lo), new.searchFrom(lo)
	var moved, between float64
	first := true
	var prev uint64
	for {
		// The next arc end: the smaller of the next points, capped at hi.
		b := hi
		if i < len(old.points) && old.points[i] < b {
			b = old.points[i]
		}
		if j < len(new.points) && new.points[j] < b {
			b = new.points[j]
		}
		var width float64
		if first {
			width = float64(b-lo) + 1
		} else {
			width = float64(b - prev)
		}
		a, c := ids.old[ownerAt(old, i)], ids.new[ownerAt(new, j)]
		if a != c {
			moved += width
			if ids.survivor(a) && ids.survivor(c) {
				between += width
			}
		}
		if b == hi {
			break
		}
		for i < len(old.points) && old.points[i] <= b {
			i++
		}
		for j < len(new.points) && new.points[j] <= b {
			j++
		}
		prev, first = b, false
	}
	total := float64(span)
	if span == 0 {
		total = math.Exp2(64)
	}
	// Rounding in the sums may overshoot 1 by a few ulps.
	return Movement{Moved: min(moved/total, 1), BetweenSurvivors: min(between/total, 1), Exact: true}
}

// searchFrom returns the index of the first point >= pos, or len(points).
func (r *Ring) searchFrom(pos uint64) int {
	lo, hi := 0, len(r.points)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if r.points[mid] < pos {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// diffModula compares two modula rings that share a key hash.
func diffModula(old, new *Ring) Movement {
	ids := newLabelIDs(old, new)
	_, span := old.kh.keySpace()
	a, b := uint64(len(old.slots)), uint64(len(new.slots))
	g := gcd(a, b)
	period := a / g * b
	// count returns moved and between-survivor hashes among h in [0, n).
	count := func(n uint64) (moved, between uint64) {
		for h := range n {
			x, y := ids.old[old.slots[h%a]], ids.new[new.slots[h%b]]
			if x != y {
				moved++
				if ids.survivor(x) && ids.survivor(y) {
					between++
				}
			}
		}
		return moved, between
	}
	switch {
	case span <= modulaPeriodLimit:
		m, s := count(span)
		return Movement{Moved: float64(m) / float64(span), BetweenSurvivors: float64(s) / float64(span), Exact: true}
	case period <= modulaPeriodLimit:
		q, rest := span/period, span%period
		m, s := count(period)
		rm, rs := count(rest)
		return Movement{
			Moved:            (float64(q)*float64(m) + float64(rm)) / float64(span),
			BetweenSurvivors: (float64(q)*float64(s) + float64(rs)) / float64(span),
			Exact:            true,
		}
	}
	m, s := modulaPeriodCounts(ids, old.slots, new.slots, g)
	return Movement{Moved: m / float64(period), BetweenSurvivors: s / float64(period)}
}

// modulaPeriodCounts returns the moved and between-survivor counts over one
// period of lcm(len(x), len(y)) hashes without visiting each hash: h is
// congruent to i mod len(x) and to j mod len(y) for exactly one h of the
// period whenever i and j agree mod g = gcd, so each residue class mod g
// pairs every slot of x in it with every slot of y in it.
func modulaPeriodCounts(ids labelIDs, x, y []int32, g uint64) (moved, between float64) {
	nLabels := len(ids.inOld)
	cx := make([]float64, nLabels)
	cy := make([]float64, nLabels)
	for r := range g {
		clear(cx)
		clear(cy)
		var nx, ny, sx, sy float64
		for i := r; i < uint64(len(x)); i += g {
			id := ids.old[x[i]]
			cx[id]++
			nx++
			if ids.survivor(id) {
				sx++
			}
		}
		for j := r; j < uint64(len(y)); j += g {
			id := ids.new[y[j]]
			cy[id]++
			ny++
			if ids.survivor(id) {
				sy++
			}
		}
		var same, sameSurvivor float64
		for id := range nLabels {
			p := cx[id] * cy[id]
			same += p
			if ids.survivor(id) {
				sameSurvivor += p
			}
		}
		moved += nx*ny - same
		between += sx*sy - sameSurvivor
	}
	return moved, between
}

// gcd returns the greatest common divisor of a and b.
func gcd(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// sampleKeys returns n deterministic pseudo-random printable keys of 8 to
// 23 bytes (letters, digits and braces, so that tag rules matter).
func sampleKeys(n int) []string {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789{}"
	rng := rand.New(rand.NewPCG(0x5eed, 0xd1ff))
	keys := make([]string, n)
	var buf [24]byte
	for i := range keys {
		x, y, z := rng.Uint64(), rng.Uint64(), rng.Uint64()
		size := 8 + int(z>>60)
		for j := range size {
			w := &x // 10 characters of 6 bits from x, 10 from y, 3 from z
			if j >= 10 {
				w = &y
				if j >= 20 {
					w = &z
				}
			}
			buf[j] = alphabet[*w>>(6*(j%10))&63]
		}
		keys[i] = string(buf[:size])
	}
	return keys
}
