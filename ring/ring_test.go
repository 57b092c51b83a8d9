package ring

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// shardsN returns n unnamed weight-1 shards on consecutive local ports.
func shardsN(n int) []Shard {
	s := make([]Shard, n)
	for i := range s {
		s[i] = Shard{Addr: fmt.Sprintf("127.0.0.1:%d", 7000+i), Weight: 1}
	}
	return s
}

func mustNew(t testing.TB, cfg Config) *Ring {
	t.Helper()
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestNewRejects(t *testing.T) {
	two := shardsN(2)
	tests := []struct {
		name string
		cfg  Config
		want error
		text string // must appear in the message
	}{
		{"no shards", Config{}, ErrNoShards, "no shards"},
		{"zero weight", Config{Shards: []Shard{{Addr: "h:1", Weight: 0}}}, ErrBadWeight, "h:1"},
		{"negative weight", Config{Shards: []Shard{{Addr: "h:1", Weight: 1}, {Addr: "h:2", Weight: -3}}}, ErrBadWeight, "-3"},
		{"bad address", Config{Shards: []Shard{{Addr: "nohost", Weight: 1}}}, ErrBadShard, "nohost"},
		{"bad port", Config{Shards: []Shard{{Addr: "h:0", Weight: 1}}}, ErrBadShard, "port"},
		{"empty address", Config{Shards: []Shard{{Name: "a", Weight: 1}}}, ErrBadShard, ""},
		{"duplicate name", Config{Algorithm: Jedis, Shards: []Shard{{Name: "a", Addr: "h:1", Weight: 1}, {Name: "a", Addr: "h:2", Weight: 1}}}, ErrDuplicateShard, `"a"`},
		{"duplicate address", Config{Shards: []Shard{{Name: "a", Addr: "h:1", Weight: 1}, {Name: "b", Addr: "h:1", Weight: 1}}}, ErrDuplicateShard, "h:1"},
		{"name equals other's address", Config{Shards: []Shard{{Addr: "h:1", Weight: 1}, {Name: "h:1", Addr: "h:2", Weight: 1}}}, ErrDuplicateShard, "h:1"},
		{"same continuum name", Config{Algorithm: Ketama, Shards: []Shard{{Addr: "h:11211", Weight: 1}, {Name: "h", Addr: "h:2", Weight: 1}}}, ErrDuplicateShard, "continuum"},
		{"same continuum name modula", Config{Algorithm: Modula, Shards: []Shard{{Addr: "h:11211", Weight: 1}, {Name: "h", Addr: "h:2", Weight: 1}}}, ErrDuplicateShard, "continuum"},
		{"too many points", Config{Shards: []Shard{{Addr: "h:1", Weight: MaxPoints/Murmur3PointsPerWeight + 1}}}, ErrTooManyPoints, "h:1"},
		{"too many points summed", Config{Algorithm: Jedis, Shards: []Shard{{Addr: "h:1", Weight: 60000}, {Addr: "h:2", Weight: 60000}}}, ErrTooManyPoints, ""},
		{"huge weight", Config{Algorithm: Jedis, Shards: []Shard{{Addr: "h:1", Weight: 1 << 62}}}, ErrTooManyPoints, ""},
		{"too many slots", Config{Algorithm: Modula, Shards: []Shard{{Addr: "h:1", Weight: MaxPoints + 1}}}, ErrTooManyPoints, ""},
		{"ketama weight too small", Config{Algorithm: Ketama, Shards: []Shard{{Addr: "h:1", Weight: 1}, {Addr: "h:2", Weight: 1000}}}, ErrBadWeight, "h:1"},
		{"ketama name too long", Config{Algorithm: Ketama, Shards: []Shard{{Name: strings.Repeat("n", 83), Addr: "h:1", Weight: 1}, {Addr: "h:2", Weight: 1}}}, ErrBadShard, "too long"},
		{"unknown algorithm", Config{Algorithm: "rendezvous", Shards: two}, ErrUnknownAlgorithm, "rendezvous"},
		{"unknown hash", Config{Algorithm: Ketama, KeyHash: "sha1", Shards: two}, ErrUnknownHash, "sha1"},
		{"hash of another family", Config{Algorithm: Jedis, KeyHash: "fnv1a_64", Shards: two}, ErrUnknownHash, "fnv1a_64"},
		{"murmur3 takes only murmur3", Config{KeyHash: "md5", Shards: two}, ErrUnknownHash, "md5"},
		{"bad tag", Config{Tag: "{", Shards: two}, ErrBadTag, `"{"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := New(tc.cfg)
			if r != nil || !errors.Is(err, tc.want) {
				t.Fatalf("New = %v, %v; want error %v", r, err, tc.want)
			}
			if !strings.HasPrefix(err.Error(), "shardis: ") || !strings.Contains(err.Error(), tc.text) {
				t.Errorf("message %q: want prefix \"shardis: \" and %q", err, tc.text)
			}
		})
	}
}

func TestNewAcceptsLimits(t *testing.T) {
	// The longest ketama name twemproxy hashes faithfully: "<name>-39" is 85 bytes.
	name := strings.Repeat("n", 85-len("-39"))
	mustNew(t, Config{Algorithm: Ketama, Shards: []Shard{{Name: name, Addr: "h:1", Weight: 1}, {Addr: "h:2", Weight: 1}}})
	// Exactly MaxPoints points are allowed, one more is not.
	exact := []Shard{{Addr: "h:1", Weight: MaxPoints/Murmur3PointsPerWeight - 1}, {Addr: "h:2", Weight: 1}}
	if total, err := totalWeight(exact, Murmur3PointsPerWeight, MaxPoints); err != nil || total != MaxPoints/Murmur3PointsPerWeight {
		t.Errorf("totalWeight at the limit = %d, %v", total, err)
	}
	exact[1].Weight++
	if _, err := totalWeight(exact, Murmur3PointsPerWeight, MaxPoints); !errors.Is(err, ErrTooManyPoints) {
		t.Errorf("totalWeight over the limit: %v", err)
	}
	r := mustNew(t, Config{Algorithm: Modula, Shards: []Shard{{Addr: "h:1", Weight: 1 << 16}, {Addr: "h:2", Weight: 1}}})
	if r.Points() != 1<<16+1 {
		t.Errorf("modula points %d, want %d", r.Points(), 1<<16+1)
	}
}

func TestConfigDefaults(t *testing.T) {
	tests := []struct {
		alg             Algorithm
		wantAlg         Algorithm
		wantHash, wantT string
	}{
		{"", Murmur3, "murmur3", "cluster"},
		{Jedis, Jedis, "murmur", "none"},
		{JedisLegacy, JedisLegacy, "murmur", "none"},
		{Ketama, Ketama, "fnv1a_64", "none"},
		{Modula, Modula, "fnv1a_64", "none"},
	}
	for _, tc := range tests {
		shards := shardsN(3)
		r := mustNew(t, Config{Algorithm: tc.alg, Shards: shards})
		c := r.Config()
		if c.Algorithm != tc.wantAlg || c.KeyHash != tc.wantHash || c.Tag != tc.wantT {
			t.Errorf("%q: config %+v, want %s/%s/%s", tc.alg, c, tc.wantAlg, tc.wantHash, tc.wantT)
		}
		// The ring keeps its own copy of the shards.
		shards[0].Name = "changed"
		c.Shards[1].Name = "changed too"
		if got := r.Shards(); got[0].Name != "" || got[1].Name != "" {
			t.Errorf("%q: ring shares its shard slice: %+v", tc.alg, got)
		}
		if s := r.String(); !strings.Contains(s, string(tc.wantAlg)) || !strings.Contains(s, "3 shards") {
			t.Errorf("String() = %q", s)
		}
	}
}

func TestPointCounts(t *testing.T) {
	ws := []Shard{{Addr: "h:1", Weight: 1}, {Addr: "h:2", Weight: 2}}
	tests := []struct {
		alg  Algorithm
		want int
	}{
		{Murmur3, 3 * Murmur3PointsPerWeight},
		{Jedis, 3 * 160},
		{JedisLegacy, 3 * 160},
		// twemproxy: floor(1/3*40*2)*4 + floor(2/3*40*2)*4 = 26*4 + 53*4
		{Ketama, 316},
		{Modula, 3},
	}
	for _, tc := range tests {
		r := mustNew(t, Config{Algorithm: tc.alg, Shards: ws})
		if r.Points() != tc.want {
			t.Errorf("%s: %d points, want %d", tc.alg, r.Points(), tc.want)
		}
	}
}

func TestKetamaPointCount(t *testing.T) {
	tests := []struct{ w, total, n, want int }{
		{1, 1, 1, 160},
		{1, 3, 3, 160},
		{1, 3, 2, 104},
		{2, 3, 2, 212},
		{1, 10, 10, 160},
		{3, 7, 3, 204},  // 3/7*40*3 = 51.43 -> 51*4
		{1, 1000, 2, 0}, // 0.08 -> no point
		{7, 100, 10, 112},
		// float32 rounding: 29/60*40*3 is exactly 58, twemproxy's float
		// arithmetic gives 57.99..., hence 57*4 points.
		{29, 60, 3, 228},
		{101, 120, 3, 400},
	}
	for _, tc := range tests {
		if got := ketamaPointCount(tc.w, tc.total, tc.n); got != tc.want {
			t.Errorf("ketamaPointCount(%d, %d, %d) = %d, want %d", tc.w, tc.total, tc.n, got, tc.want)
		}
	}
}

func TestSingleShardAlwaysZero(t *testing.T) {
	for _, alg := range []Algorithm{Murmur3, Jedis, JedisLegacy, Ketama, Modula} {
		r := mustNew(t, Config{Algorithm: alg, Shards: shardsN(1)})
		for _, k := range []string{"", "a", "{x}", "\xff"} {
			if r.Locate(k) != 0 || r.LocateBytes([]byte(k)) != 0 {
				t.Errorf("%s: %q not on shard 0", alg, k)
			}
		}
	}
}

func TestSortPointsTies(t *testing.T) {
	shards := []Shard{{Addr: "b:1"}, {Addr: "a:1"}, {Addr: "c:1"}}
	tests := []struct {
		name    string
		tie     tiePolicy
		wantOwn []int32
	}{
		{"first", tieFirst, []int32{0, 2, 0}},
		{"last", tieLast, []int32{0, 2, 2}},
		{"smallest label", tieSmallestLabel(shards), []int32{0, 2, 1}},
	}
	for _, tc := range tests {
		pos, own := sortRing([]uint64{5, 3, 5, 5, 1}, []int32{0, 2, 1, 2, 0}, tc.tie)
		if want := []uint64{1, 3, 5}; !slices.Equal(pos, want) || !slices.Equal(own, tc.wantOwn) {
			t.Errorf("%s: %v %v, want %v %v", tc.name, pos, own, want, tc.wantOwn)
		}
	}
}

func TestJedisNodeNames(t *testing.T) {
	tests := []struct {
		i      int
		s      Shard
		n      int
		legacy bool
		want   string
	}{
		{0, Shard{Addr: "h:1", Weight: 1}, 0, false, "SHARD-0-NODE-0"},
		{3, Shard{Addr: "h:1", Weight: 2}, 319, true, "SHARD-3-NODE-319"},
		{1, Shard{Name: "a", Addr: "h:1", Weight: 1}, 17, false, "a*17"},
		{1, Shard{Name: "a", Addr: "h:1", Weight: 1}, 0, true, "a*10"},
		{1, Shard{Name: "a", Addr: "h:1", Weight: 1}, 159, true, "a*1159"},
		{1, Shard{Name: "é", Addr: "h:1", Weight: 12}, 5, true, "é*125"},
	}
	for _, tc := range tests {
		if got := string(jedisNodeName(nil, tc.i, tc.s, tc.n, tc.legacy)); got != tc.want {
			t.Errorf("jedisNodeName(%d, %+v, %d, %v) = %q, want %q", tc.i, tc.s, tc.n, tc.legacy, got, tc.want)
		}
	}
}

func TestJedisLegacyDiffersOnlyForNamedShards(t *testing.T) {
	unnamed := shardsN(4)
	named := shardsN(4)
	for i := range named {
		named[i].Name = fmt.Sprintf("s%d", i)
	}
	keys := sampleKeys(2000)
	for _, tc := range []struct {
		shards   []Shard
		wantSame bool
	}{{unnamed, true}, {named, false}} {
		a := mustNew(t, Config{Algorithm: Jedis, Shards: tc.shards})
		b := mustNew(t, Config{Algorithm: JedisLegacy, Shards: tc.shards})
		d := DiffKeys(a, b, keys)
		if (d.Moved == 0) != tc.wantSame {
			t.Errorf("named=%v: moved %.3f between jedis and jedis-legacy", tc.shards[0].Name != "", d.Moved)
		}
	}
}

func TestContinuumName(t *testing.T) {
	tests := []struct {
		s    Shard
		want string
	}{
		{Shard{Addr: "10.0.0.1:6379"}, "10.0.0.1:6379"},
		{Shard{Addr: "10.0.0.1:11211"}, "10.0.0.1"},
		{Shard{Addr: "[::1]:11211"}, "[::1]"},
		{Shard{Name: "cache-a", Addr: "10.0.0.1:11211"}, "cache-a"},
	}
	for _, tc := range tests {
		if got := continuumName(tc.s); got != tc.want {
			t.Errorf("continuumName(%+v) = %q, want %q", tc.s, got, tc.want)
		}
	}
}

func TestModulaOrderAndSlots(t *testing.T) {
	// twemproxy orders servers by continuum name: shorter first, then bytewise.
	shards := []Shard{
		{Addr: "10.0.0.10:6379", Weight: 1}, // longest name
		{Addr: "10.0.0.2:6379", Weight: 2},
		{Addr: "10.0.0.1:6379", Weight: 1},
	}
	r := mustNew(t, Config{Algorithm: Modula, Shards: shards})
	if want := []int32{2, 1, 1, 0}; !slices.Equal(r.slots, want) {
		t.Fatalf("slots %v, want %v", r.slots, want)
	}
	// A key goes to slot fnv1a_64(key) % 4 (the empty key to slot 0); the
	// slots of these keys were worked out by hand from the hash vectors of
	// testdata/hash_fnv1a_64.tsv and the order above.
	for _, tc := range []struct {
		key  string
		want int
	}{
		{"", 2}, {"a", 2}, {"foo", 0}, {"bar", 1}, {"user:1", 0}, {"user:2", 1}, {"user:3", 1}, {"{x}", 1},
	} {
		if got := r.Locate(tc.key); got != tc.want {
			t.Errorf("%q: shard %d, want %d", tc.key, got, tc.want)
		}
	}
}

func TestMurmur3IgnoresListOrder(t *testing.T) {
	shards := shardsN(8)
	shards[3].Name = "named"
	shards[5].Weight = 3
	a := mustNew(t, Config{Shards: shards})
	rev := slices.Clone(shards)
	slices.Reverse(rev)
	b := mustNew(t, Config{Shards: rev})
	for _, k := range sampleKeys(20000) {
		if la, lb := shards[a.Locate(k)].Label(), rev[b.Locate(k)].Label(); la != lb {
			t.Fatalf("%q: %s vs %s after reordering the list", k, la, lb)
		}
	}
	if d := Diff(a, b); d.Moved != 0 || !d.Exact {
		t.Errorf("Diff after reordering = %+v, want nothing moved", d)
	}
}

func TestMurmur3PointNaming(t *testing.T) {
	// The documented promise: point n of a shard is murmur3.Sum64(label-n).
	// The positions below were written down once (checked against
	// github.com/spaolacci/murmur3) and stand: "only-a-0" and "h:2-0" are
	// the points of the two shards' first virtual nodes.
	r := mustNew(t, Config{Shards: []Shard{{Name: "only-a", Addr: "h:1", Weight: 1}, {Addr: "h:2", Weight: 1}}})
	if len(r.points) != 2*Murmur3PointsPerWeight || len(r.owners) != len(r.points) {
		t.Fatalf("%d points, %d owners, want %d", len(r.points), len(r.owners), 2*Murmur3PointsPerWeight)
	}
	for _, want := range []struct {
		pos   uint64
		owner int32
	}{
		{0x1be1ab18110bda03, 0}, // only-a-0
		{0x64b1968a873e53aa, 0}, // only-a-1023
		{0xea50ea9efe23b7c4, 1}, // h:2-0
		{0xa35cc2db6e6b2eab, 1}, // h:2-1023
	} {
		i, ok := slices.BinarySearch(r.points, want.pos)
		if !ok || r.owners[i] != want.owner {
			t.Errorf("point %#x: found %v, want it owned by shard %d", want.pos, ok, want.owner)
		}
	}
	// The sorted ring at a few fixed ranks.
	for _, want := range []struct {
		rank  int
		pos   uint64
		owner int32
	}{
		{0, 0x104656f4f88549, 0},
		{1, 0x1fcd13434f6260, 0},
		{2, 0x449510732b37f7, 1},
		{1000, 0x809e6147330ab90d, 0},
		{2047, 0xffcf855e82d054e7, 1},
	} {
		if r.points[want.rank] != want.pos || r.owners[want.rank] != want.owner {
			t.Errorf("point %d = %#x (shard %d), want %#x (shard %d)",
				want.rank, r.points[want.rank], r.owners[want.rank], want.pos, want.owner)
		}
	}
}

func TestDefaultTagKeepsHashTagsTogether(t *testing.T) {
	r := mustNew(t, Config{Shards: shardsN(10)})
	for i := range 200 {
		tag := fmt.Sprintf("user%d", i)
		want := r.Locate(tag)
		for _, k := range []string{"{" + tag + "}.following", "x{" + tag + "}", "{" + tag + "}"} {
			if got := r.Locate(k); got != want {
				t.Fatalf("%q on %d, %q on %d", k, got, tag, want)
			}
		}
	}
	// With Tag "none" the braces are hashed too.
	none := mustNew(t, Config{Tag: "none", Shards: shardsN(10)})
	differ := 0
	for i := range 200 {
		if none.Locate(fmt.Sprintf("{user%d}.a", i)) != none.Locate(fmt.Sprintf("user%d", i)) {
			differ++
		}
	}
	if differ < 100 {
		t.Errorf("tag none: only %d of 200 tagged keys moved away from their tag", differ)
	}
}

// keyCount returns n, or n/4 under the race detector.
func keyCount(n int) int {
	if raceDetector {
		return n / 4
	}
	return n
}

// randomKeyBytes fills buf (at least 24 bytes) with a random printable key
// of 8..23 bytes.
func randomKeyBytes(rng *rand.Rand, buf []byte) []byte {
	x, y, z := rng.Uint64(), rng.Uint64(), rng.Uint64()
	buf = buf[:8+z%16]
	for i := range buf {
		w := &x
		if i >= 8 {
			w = &y
			if i >= 16 {
				w = &z
			}
		}
		buf[i] = byte(0x21 + (*w>>(8*(i%8))&0xff)%0x5e)
	}
	return buf
}

func TestMurmur3Balance(t *testing.T) {
	const keys = 1_000_000 // about 1.5 s under -race
	r := mustNew(t, Config{Shards: shardsN(10)})
	counts := make([]int, 10)
	rng := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 32)
	for range keys {
		counts[r.LocateBytes(randomKeyBytes(rng, buf))]++
	}
	fair := float64(keys) / 10
	for i, c := range counts {
		if dev := float64(c)/fair - 1; dev < -0.10 || dev > 0.10 {
			t.Errorf("shard %d got %d keys, %.1f%% off its fair share %.0f", i, c, 100*dev, fair)
		}
	}
	t.Logf("counts %v", counts)
}

func TestWeightsRespected(t *testing.T) {
	keys := keyCount(400_000)
	for _, alg := range []Algorithm{Murmur3, Jedis, Ketama, Modula} {
		shards := []Shard{
			{Addr: "10.1.0.1:6379", Weight: 1}, {Addr: "10.1.0.2:6379", Weight: 2},
			{Addr: "10.1.0.3:6379", Weight: 3}, {Addr: "10.1.0.4:6379", Weight: 4},
		}
		r := mustNew(t, Config{Algorithm: alg, Shards: shards})
		counts := make([]int, len(shards))
		rng := rand.New(rand.NewPCG(3, 4))
		buf := make([]byte, 32)
		for range keys {
			counts[r.LocateBytes(randomKeyBytes(rng, buf))]++
		}
		tol := 0.10
		if alg == Jedis || alg == Ketama {
			tol = 0.20 // 160 points per unit of weight or per server: coarser
		}
		for i, c := range counts {
			fair := float64(keys*shards[i].Weight) / 10
			if dev := float64(c)/fair - 1; dev < -tol || dev > tol {
				t.Errorf("%s: shard %d (weight %d) got %d keys, %.1f%% off %.0f", alg, i, shards[i].Weight, c, 100*dev, fair)
			}
		}
		t.Logf("%s: %v", alg, counts)
	}
}

func TestAddingEleventhShard(t *testing.T) {
	const keys = 1_000_000 // about 2.5 s under -race
	old := mustNew(t, Config{Shards: shardsN(10)})
	grown := mustNew(t, Config{Shards: shardsN(11)})
	newLabel := shardsN(11)[10].Label()
	rng := rand.New(rand.NewPCG(5, 6))
	buf := make([]byte, 32)
	moved := 0
	for range keys {
		k := randomKeyBytes(rng, buf)
		a, b := old.LocateBytes(k), grown.LocateBytes(k)
		if a == b {
			continue
		}
		moved++
		if grown.cfg.Shards[b].Label() != newLabel {
			t.Fatalf("key %q moved from shard %d to old shard %d", k, a, b)
		}
	}
	frac := float64(moved) / float64(keys)
	if frac < 0.06 || frac > 0.12 {
		t.Errorf("adding an 11th shard moved %.4f of the keys, want about 1/11 = %.4f", frac, 1.0/11)
	}
	t.Logf("moved %.4f (1/11 = %.4f)", frac, 1.0/11)
}
