package ring

import (
	"fmt"
	"math"
	"testing"
)

func TestDiffAgreesWithDiffKeys(t *testing.T) {
	keys := sampleKeys(keyCount(200_000))
	// Five standard errors of the two estimates (DiffKeys on keys, and Diff
	// when it samples).
	tol := 5 * math.Sqrt(0.25/float64(len(keys))+0.25/diffSampleKeys)
	named := func(n int) []Shard {
		s := shardsN(n)
		for i := range s {
			s[i].Name = fmt.Sprintf("node-%d", i)
		}
		return s
	}
	reweighted := shardsN(6)
	reweighted[2].Weight = 3
	tests := []struct {
		name      string
		old, new  Config
		wantExact bool
	}{
		{"murmur3 add", Config{Shards: shardsN(5)}, Config{Shards: shardsN(6)}, true},
		{"murmur3 remove", Config{Shards: shardsN(6)}, Config{Shards: shardsN(6)[1:]}, true},
		{"murmur3 reweight", Config{Shards: shardsN(6)}, Config{Shards: reweighted}, true},
		{"jedis add", Config{Algorithm: Jedis, Shards: named(4)}, Config{Algorithm: Jedis, Shards: named(5)}, true},
		// Unnamed Jedis shards are named by position: removing the first renames all.
		{"jedis unnamed remove first", Config{Algorithm: Jedis, Shards: shardsN(4)}, Config{Algorithm: Jedis, Shards: shardsN(4)[1:]}, true},
		{"jedis md5", Config{Algorithm: Jedis, KeyHash: "md5", Shards: named(3)}, Config{Algorithm: Jedis, KeyHash: "md5", Shards: named(4)}, true},
		{"jedis vs legacy", Config{Algorithm: Jedis, Shards: named(4)}, Config{Algorithm: JedisLegacy, Shards: named(4)}, true},
		{"ketama add", Config{Algorithm: Ketama, Shards: shardsN(3)}, Config{Algorithm: Ketama, Shards: shardsN(4)}, true},
		{"ketama crc16", Config{Algorithm: Ketama, KeyHash: "crc16", Shards: shardsN(3)}, Config{Algorithm: Ketama, KeyHash: "crc16", Shards: shardsN(4)}, true},
		{"modula add", Config{Algorithm: Modula, Shards: shardsN(3)}, Config{Algorithm: Modula, Shards: shardsN(4)}, true},
		{"modula crc32", Config{Algorithm: Modula, KeyHash: "crc32", Shards: shardsN(5)}, Config{Algorithm: Modula, KeyHash: "crc32", Shards: shardsN(7)}, true},
		{"murmur3 to jedis (sampled)", Config{Shards: shardsN(4)}, Config{Algorithm: Jedis, Shards: shardsN(4)}, false},
		{"ketama to modula (sampled)", Config{Algorithm: Ketama, Shards: shardsN(4)}, Config{Algorithm: Modula, Shards: shardsN(4)}, false},
		{"tag change (sampled)", Config{Shards: shardsN(4)}, Config{Tag: "none", Shards: shardsN(4)}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			old, new := mustNew(t, tc.old), mustNew(t, tc.new)
			d := Diff(old, new)
			k := DiffKeys(old, new, keys)
			if d.Exact != tc.wantExact {
				t.Errorf("Exact = %v, want %v", d.Exact, tc.wantExact)
			}
			if d.Exact && d.Keys != 0 || !d.Exact && d.Keys != diffSampleKeys {
				t.Errorf("Keys = %d with Exact %v", d.Keys, d.Exact)
			}
			if k.Keys != len(keys) || k.Exact {
				t.Errorf("DiffKeys: Keys %d Exact %v", k.Keys, k.Exact)
			}
			if math.Abs(d.Moved-k.Moved) > tol || math.Abs(d.BetweenSurvivors-k.BetweenSurvivors) > tol {
				t.Errorf("Diff %+v, DiffKeys %+v", d, k)
			}
			if d.BetweenSurvivors > d.Moved || d.Moved < 0 || d.Moved > 1 {
				t.Errorf("inconsistent %+v", d)
			}
			t.Logf("Diff moved %.4f between %.4f; DiffKeys %.4f %.4f", d.Moved, d.BetweenSurvivors, k.Moved, k.BetweenSurvivors)
		})
	}
}

func TestDiffExpectedMovement(t *testing.T) {
	// Consistent rings move about 1/n when a shard joins, nothing between survivors.
	for _, alg := range []Algorithm{Murmur3, Jedis, Ketama} {
		shards := shardsN(8)
		for i := range shards {
			shards[i].Name = fmt.Sprintf("n%d", i) // stable Jedis names
		}
		d := Diff(mustNew(t, Config{Algorithm: alg, Shards: shards[:7]}), mustNew(t, Config{Algorithm: alg, Shards: shards}))
		if d.Moved < 0.08 || d.Moved > 0.2 || d.BetweenSurvivors != 0 {
			t.Errorf("%s: adding the 8th shard: %+v, want about 1/8 and nothing between survivors", alg, d)
		}
	}
	// Modula reshuffles almost everything: from 3 to 4 slots, a key stays
	// only if h%3 and h%4 pick the same server, which happens for 3 of 12
	// residues.
	d := Diff(mustNew(t, Config{Algorithm: Modula, Shards: shardsN(3)}), mustNew(t, Config{Algorithm: Modula, Shards: shardsN(4)}))
	if !d.Exact || math.Abs(d.Moved-0.75) > 1e-6 || math.Abs(d.BetweenSurvivors-0.5) > 1e-6 {
		t.Errorf("modula 3 -> 4: %+v, want moved 0.75, between survivors 0.5", d)
	}
	// Identical rings: nothing moves. Disjoint shards: everything moves.
	r := mustNew(t, Config{Shards: shardsN(4)})
	if d := Diff(r, r); d.Moved != 0 || !d.Exact {
		t.Errorf("Diff(r, r) = %+v", d)
	}
	other := mustNew(t, Config{Shards: []Shard{{Addr: "10.9.9.9:1", Weight: 1}}})
	if d := Diff(r, other); d.Moved != 1 || d.BetweenSurvivors != 0 {
		t.Errorf("disjoint: %+v", d)
	}
	if d := Diff(nil, r); d != (Movement{}) {
		t.Errorf("nil ring: %+v", d)
	}
	if d := DiffKeys(r, r, nil); d != (Movement{}) {
		t.Errorf("no keys: %+v", d)
	}
}

func TestDiffModulaLongPeriod(t *testing.T) {
	// lcm(2999, 3001) exceeds the exact-period limit: the fraction over one
	// period is used and marked inexact.
	old := mustNew(t, Config{Algorithm: Modula, Shards: []Shard{{Addr: "a:1", Weight: 1000}, {Addr: "b:1", Weight: 1999}}})
	new := mustNew(t, Config{Algorithm: Modula, Shards: []Shard{{Addr: "a:1", Weight: 1000}, {Addr: "b:1", Weight: 2001}}})
	d := Diff(old, new)
	keys := sampleKeys(keyCount(200_000))
	tol := 5 * math.Sqrt(0.25/float64(len(keys)))
	k := DiffKeys(old, new, keys)
	if d.Exact || math.Abs(d.Moved-k.Moved) > tol || math.Abs(d.BetweenSurvivors-k.BetweenSurvivors) > tol {
		t.Errorf("Diff %+v, DiffKeys %+v", d, k)
	}
	// The residue counting must agree with brute force over one period.
	ids := newLabelIDs(old, new)
	small := []int32{0, 0, 1, 1, 1, 0}
	other := []int32{1, 0, 0, 1}
	m, s := modulaPeriodCounts(ids, small, other, gcd(6, 4))
	var bm, bs float64
	for h := range 12 {
		x, y := ids.old[small[h%6]], ids.new[other[h%4]]
		if x != y {
			bm++
			if ids.survivor(x) && ids.survivor(y) {
				bs++
			}
		}
	}
	if m != bm || s != bs {
		t.Errorf("period counts %v %v, brute force %v %v", m, s, bm, bs)
	}
}
