package bench

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"
	"github.com/shardis/shardis/ring"
)

// router is a baseline under test, built for n shards.
type router struct {
	name  string
	build func(t *testing.T, n int) func(string) int
}

func shardNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("shard-%d", i)
	}
	return names
}

func ringShards(n int, named bool) []ring.Shard {
	shards := make([]ring.Shard, n)
	for i := range shards {
		shards[i] = ring.Shard{Addr: fmt.Sprintf("127.0.0.1:%d", 7000+i), Weight: 1}
		if named {
			shards[i].Name = fmt.Sprintf("shard-%d", i)
		}
	}
	return shards
}

var routers = []router{
	{"rendezvous", func(t *testing.T, n int) func(string) int {
		return NewRendezvous(shardNames(n)).Locate
	}},
	{"treemap", func(t *testing.T, n int) func(string) int {
		tm, err := NewTreeMap(ringShards(n, false))
		if err != nil {
			t.Fatal(err)
		}
		return tm.Locate
	}},
	{"jump", func(t *testing.T, n int) func(string) int {
		return func(k string) int { return Jump(k, n) }
	}},
}

func TestRoutersInRangeAndDeterministic(t *testing.T) {
	keys := append(Keys("user", 5000), "", "{}", "{a}b", "é\xff\x00")
	for _, r := range routers {
		for _, n := range []int{1, 2, 3, 10, 100} {
			t.Run(fmt.Sprintf("%s/%d", r.name, n), func(t *testing.T) {
				locate := r.build(t, n)
				again := r.build(t, n) // a second router built the same way
				for _, k := range keys {
					i := locate(k)
					if i < 0 || i >= n {
						t.Fatalf("Locate(%q) = %d, want 0..%d", k, i, n-1)
					}
					if j := again(k); j != i {
						t.Fatalf("Locate(%q) = %d, then %d from an identical router", k, i, j)
					}
				}
			})
		}
	}
}

func TestRoutersSpread(t *testing.T) {
	const shards, nkeys, tolerance = 10, 100_000, 0.15
	keys := Keys("user", nkeys)
	for _, r := range routers {
		t.Run(r.name, func(t *testing.T) {
			locate := r.build(t, shards)
			counts := make([]int, shards)
			for _, k := range keys {
				counts[locate(k)]++
			}
			fair := float64(nkeys) / shards
			for i, c := range counts {
				if dev := (float64(c) - fair) / fair; dev > tolerance || dev < -tolerance {
					t.Errorf("shard %d got %d keys, %+.1f%% off the fair %v (counts %v)", i, c, 100*dev, fair, counts)
				}
			}
		})
	}
}

func TestTreeMapMatchesRingJedis(t *testing.T) {
	weighted := ringShards(5, true)
	weighted[1].Weight, weighted[3].Weight = 3, 2
	tests := []struct {
		name   string
		shards []ring.Shard
	}{
		{"unnamed-10", ringShards(10, false)},
		{"named-10", ringShards(10, true)},
		{"named-weighted", weighted},
		{"unnamed-100", ringShards(100, false)},
		{"single", ringShards(1, false)},
	}
	keys := append(Keys("user", 10_000), "", "a", "12345678", "123456789", "{tag}x", "ключ")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ring.New(ring.Config{Algorithm: ring.Jedis, Shards: tt.shards})
			if err != nil {
				t.Fatal(err)
			}
			tm, err := NewTreeMap(tt.shards)
			if err != nil {
				t.Fatal(err)
			}
			if tm.Points() != r.Points() {
				t.Errorf("TreeMap has %d points, ring.Jedis %d", tm.Points(), r.Points())
			}
			for _, k := range keys {
				if got, want := tm.Locate(k), r.Locate(k); got != want {
					t.Fatalf("TreeMap.Locate(%q) = %d, ring.Jedis says %d", k, got, want)
				}
			}
		})
	}
}

func TestNewTreeMapErrors(t *testing.T) {
	tests := []struct {
		name   string
		shards []ring.Shard
	}{
		{"nil", nil},
		{"zero-weight", []ring.Shard{{Addr: "127.0.0.1:1", Weight: 0}}},
		{"negative-weight", []ring.Shard{{Addr: "127.0.0.1:1", Weight: 1}, {Addr: "127.0.0.1:2", Weight: -1}}},
		{"too-many-points", []ring.Shard{{Addr: "127.0.0.1:1", Weight: ring.MaxPoints}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tm, err := NewTreeMap(tt.shards)
			if !errors.Is(err, ErrBadShards) || tm != nil {
				t.Fatalf("NewTreeMap = %v, %v; want nil and an error wrapping ErrBadShards", tm, err)
			}
		})
	}
}

func TestEmptyRouters(t *testing.T) {
	if got := NewRendezvous(nil).Locate("k"); got != -1 {
		t.Errorf("Rendezvous over no shards: Locate = %d, want -1", got)
	}
	for _, n := range []int{0, -1} {
		if got := Jump("k", n); got != -1 {
			t.Errorf("Jump(k, %d) = %d, want -1", n, got)
		}
	}
}

func TestJumpMovesOneInNPlusOne(t *testing.T) {
	keys := Keys("user", 100_000)
	for n := 1; n <= 20; n++ {
		moved := 0
		for _, k := range keys {
			before, after := Jump(k, n), Jump(k, n+1)
			if before == after {
				continue
			}
			if after != n {
				t.Fatalf("growing %d -> %d moved %q from %d to %d, not to the new bucket", n, n+1, k, before, after)
			}
			moved++
		}
		want := float64(len(keys)) / float64(n+1)
		if dev := (float64(moved) - want) / want; dev > 0.05 || dev < -0.05 {
			t.Errorf("growing %d -> %d moved %d keys, want about %.0f (%+.1f%%)", n, n+1, moved, want, 100*dev)
		}
	}
}

func TestRendezvousMovesOnlyToTheNewShard(t *testing.T) {
	keys := Keys("user", 50_000)
	for _, n := range []int{2, 3, 10} {
		small, big := NewRendezvous(shardNames(n)), NewRendezvous(shardNames(n+1))
		moved := 0
		for _, k := range keys {
			before, after := small.Locate(k), big.Locate(k)
			if before == after {
				continue
			}
			if after != n {
				t.Fatalf("adding shard %d moved %q from %d to %d", n, k, before, after)
			}
			moved++
		}
		want := float64(len(keys)) / float64(n+1)
		if dev := (float64(moved) - want) / want; dev > 0.1 || dev < -0.1 {
			t.Errorf("adding shard %d moved %d keys, want about %.0f", n, moved, want)
		}
	}
}

func TestRendezvousHashTag(t *testing.T) {
	r := NewRendezvous(shardNames(10))
	tests := []struct{ a, b string }{
		{"{user1}.a", "{user1}.b"},
		{"x{user1}y", "user1"},
		{"{user1}{other}", "user1"},
	}
	for _, tt := range tests {
		if r.Locate(tt.a) != r.Locate(tt.b) {
			t.Errorf("%q and %q should share a shard", tt.a, tt.b)
		}
	}
	tags := []struct{ key, want string }{
		{"plain", "plain"},
		{"{}x", "{}x"},
		{"a{b", "a{b"},
		{"a}b{c}", "c"},
		{"{a}", "a"},
		{"", ""},
	}
	for _, tt := range tags {
		if got := clusterTag(tt.key); got != tt.want {
			t.Errorf("clusterTag(%q) = %q, want %q", tt.key, got, tt.want)
		}
	}
}

func TestKeys(t *testing.T) {
	if Keys("user", 0) != nil || Keys("user", -3) != nil {
		t.Error("Keys(n <= 0) should be nil")
	}
	keys := Keys("user", 1000)
	seen := map[string]bool{}
	for _, k := range keys {
		if len(k) != 16 {
			t.Fatalf("key %q has %d bytes, want 16", k, len(k))
		}
		if seen[k] {
			t.Fatalf("duplicate key %q", k)
		}
		seen[k] = true
	}
	if keys[42] != "user:00000042:pf" {
		t.Errorf("Keys[42] = %q", keys[42])
	}
}

func TestCheckReply(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		verb  string
		reply any
		err   error
		ok    bool
	}{
		{"SET", "OK", nil, true},
		{"SET", []byte("OK"), nil, false},
		{"SET", "OK", boom, false},
		{"SET", nil, nil, false},
		{"GET", []byte("abcd"), nil, true},
		{"GET", "abcd", nil, true},
		{"GET", []byte("abc"), nil, false},
		{"GET", nil, nil, false},
		{"GET", []byte("abcd"), boom, false},
		{"DEL", int64(1), nil, false},
	}
	for _, tt := range tests {
		err := CheckReply(tt.verb, tt.reply, tt.err, 4)
		if (err == nil) != tt.ok {
			t.Errorf("CheckReply(%s, %#v, %v) = %v, want ok=%v", tt.verb, tt.reply, tt.err, err, tt.ok)
		}
		if tt.err != nil && !errors.Is(err, tt.err) {
			t.Errorf("CheckReply does not wrap %v: %v", tt.err, err)
		}
	}
}

// RendezvousPerShard picks the shard whose xxhash(name + tag) is highest,
// computed here the slow way, and does not allocate.
func TestRendezvousPerShardPicksTheHighestScore(t *testing.T) {
	names := shardNames(10)
	r := NewRendezvousPerShard(names)
	counts := make([]int, len(names))
	for _, k := range Keys("ps", 20000) {
		want, best := -1, uint64(0)
		for i, n := range names {
			if s := xxhash.Sum64String(n + clusterTag(k)); want < 0 || s > best {
				want, best = i, s
			}
		}
		got := r.Locate(k)
		if got != want {
			t.Fatalf("Locate(%q) = %d, want %d", k, got, want)
		}
		counts[got]++
	}
	for i, c := range counts {
		if c < 1600 || c > 2400 {
			t.Errorf("shard %d got %d of 20000 keys", i, c)
		}
	}
	if r.Locate("{user1}.a") != r.Locate("{user1}.b") {
		t.Error("keys with one hash tag should share a shard")
	}
	long := strings.Repeat("k", 300) // beyond the stack buffer
	if got, want := r.Locate(long), NewRendezvousPerShard(names).Locate(long); got != want {
		t.Errorf("long key: %d then %d", got, want)
	}
	if got := NewRendezvousPerShard(nil).Locate("k"); got != -1 {
		t.Errorf("no shards: Locate = %d, want -1", got)
	}
	if n := testing.AllocsPerRun(100, func() { r.Locate("user:00000042:pf") }); n != 0 {
		t.Errorf("Locate allocates %v times", n)
	}
}
