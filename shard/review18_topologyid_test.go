package shard_test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// review18Placement returns, for each of n keys, the address of the shard
// that cfg's ring places it on.
func review18Placement(t *testing.T, cfg shard.Config, n int) []string {
	t.Helper()
	r, err := ring.New(cfg.RingConfig())
	if err != nil {
		t.Fatalf("ring.New: %v", err)
	}
	shards := r.Shards()
	out := make([]string, n)
	for i := range out {
		out[i] = shards[r.Locate(fmt.Sprintf("user:%d:profile", i))].Addr
	}
	return out
}

// review18Shards returns n shards on 10.0.0.1.. 10.0.0.n, weights 1 to 3
// in turn, named shard-1 .. shard-n when named is set.
func review18Shards(n int, named bool) []ring.Shard {
	shards := make([]ring.Shard, n)
	for i := range shards {
		shards[i] = ring.Shard{Addr: fmt.Sprintf("10.0.0.%d:6379", i+1), Weight: 1 + i%3}
		if named {
			shards[i].Name = fmt.Sprintf("shard-%d", i+1)
		}
	}
	return shards
}

// The TopologyID of a ring depends on what places keys, not on the order
// of a shard list whose order places nothing: the same named shards
// reordered (and, for murmur3, ketama and modula, unnamed ones: they are
// placed by their addresses) put each of 100,000 keys on the same node,
// so they must have one ID; the mover would otherwise take the processes
// of one placement for two topologies, and a migration between them
// would move nothing. Unnamed jedis shards are placed by their position:
// reordered, they place keys otherwise, and their IDs differ.
func TestReview18TopologyIDIgnoresOrderThatPlacesNothing(t *testing.T) {
	const keys = 100_000
	type placement struct {
		hash, keyHash string
		named         bool
	}
	cases := []placement{
		{"murmur3", "", true}, {"murmur3", "", false},
		{"ketama", "", true}, {"ketama", "", false}, {"ketama", "md5", true},
		{"modula", "", true}, {"modula", "", false},
		{"jedis", "", true}, {"jedis", "md5", true}, {"jedis-legacy", "", true},
		{"jedis", "", false}, {"jedis-legacy", "", false},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s/%s/named=%v", c.hash, c.keyHash, c.named), func(t *testing.T) {
			base := shard.Config{Hash: ring.Algorithm(c.hash), KeyHash: c.keyHash, Shards: review18Shards(12, c.named)}
			want := review18Placement(t, base, keys)
			rng := rand.New(rand.NewPCG(18, uint64(len(c.hash))))
			orders := map[string][]ring.Shard{"reversed": slices.Clone(base.Shards)}
			slices.Reverse(orders["reversed"])
			shuffled := slices.Clone(base.Shards)
			rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
			orders["shuffled"] = shuffled
			for name, shards := range orders {
				other := base
				other.Shards = shards
				same := slices.Equal(want, review18Placement(t, other, keys))
				idA, idB := shard.TopologyID(base), shard.TopologyID(other)
				switch {
				case same && idA != idB:
					t.Errorf("%s: every key on the same node, but the IDs differ: %s and %s", name, idA, idB)
				case !same && idA == idB:
					t.Errorf("%s: keys placed otherwise, but one ID %s", name, idA)
				}
				if !c.named && (c.hash == "jedis" || c.hash == "jedis-legacy") && same {
					t.Errorf("%s: unnamed jedis shards reordered place every key alike", name)
				}
			}
		})
	}
}

// Named and unnamed jedis shards mixed: the unnamed ones are placed by
// their positions, the named ones by their names, so named shards that
// swap places among themselves, the unnamed ones keeping theirs, place
// every key alike and keep the ID; a named shard that trades places with
// an unnamed one changes both.
func TestReview18TopologyIDJedisMixedNames(t *testing.T) {
	const keys = 100_000
	shards := review18Shards(6, true)
	shards[1].Name, shards[4].Name = "", ""
	base := shard.Config{Hash: ring.Jedis, Shards: shards}
	want := review18Placement(t, base, keys)

	swapNamed := base
	swapNamed.Shards = slices.Clone(shards)
	swapNamed.Shards[0], swapNamed.Shards[5] = swapNamed.Shards[5], swapNamed.Shards[0]
	if !slices.Equal(want, review18Placement(t, swapNamed, keys)) {
		t.Fatal("named shards swapped: keys placed otherwise")
	}
	if a, b := shard.TopologyID(base), shard.TopologyID(swapNamed); a != b {
		t.Errorf("named shards swapped: every key on the same node, but IDs %s and %s", a, b)
	}

	swapMixed := base
	swapMixed.Shards = slices.Clone(shards)
	swapMixed.Shards[0], swapMixed.Shards[1] = swapMixed.Shards[1], swapMixed.Shards[0]
	if slices.Equal(want, review18Placement(t, swapMixed, keys)) {
		t.Fatal("unnamed shard moved: every key on the same node")
	}
	if a, b := shard.TopologyID(base), shard.TopologyID(swapMixed); a == b {
		t.Errorf("unnamed shard moved: keys placed otherwise, but one ID %s", a)
	}
}

// The IDs of shard lists in their natural order (shard-1 before shard-2
// before shard-10, 10.0.0.2 before 10.0.0.10), as configs usually list
// them, are those that earlier releases gave them, whatever the order of
// the list: processes of two releases that run one config name it alike
// during a rolling upgrade. Jedis lists with unnamed shards, which are
// placed by their position, keep theirs in every order.
func TestReview18TopologyIDKeepsNaturalOrderIDs(t *testing.T) {
	cases := []struct {
		hash, keyHash string
		named         bool
		id            string
	}{
		{"murmur3", "", true, "ring-f796c749bef423bf"},
		{"murmur3", "", false, "ring-15679414880da2b6"},
		{"ketama", "", true, "ring-a16d7c4de8f37bde"},
		{"ketama", "", false, "ring-53769d3f1daaa67b"},
		{"modula", "", true, "ring-bb951cf7abc6584a"},
		{"jedis", "", true, "ring-e3532ca2e2f79396"},
		{"jedis", "md5", true, "ring-b511a06795dd345a"},
		{"jedis-legacy", "", true, "ring-d9fdf0159db2983e"},
		{"jedis", "", false, "ring-4a02e03f2802689d"},
	}
	for _, c := range cases {
		cfg := shard.Config{Hash: ring.Algorithm(c.hash), KeyHash: c.keyHash, Shards: review18Shards(12, c.named)}
		if got := shard.TopologyID(cfg); got != c.id {
			t.Errorf("%s %s named=%v: ID %s, earlier releases %s", c.hash, c.keyHash, c.named, got, c.id)
		}
		if c.hash == "jedis" && !c.named {
			continue
		}
		slices.Reverse(cfg.Shards)
		if got := shard.TopologyID(cfg); got != c.id {
			t.Errorf("%s %s named=%v, reversed: ID %s, want %s", c.hash, c.keyHash, c.named, got, c.id)
		}
	}
	mixed := review18Shards(6, true)
	mixed[1].Name, mixed[4].Name = "", ""
	mixed[0], mixed[5] = mixed[5], mixed[0]
	if got, want := shard.TopologyID(shard.Config{Hash: ring.Jedis, Shards: mixed}), "ring-706f4cc3b4506161"; got != want {
		t.Errorf("jedis, named and unnamed: ID %s, want %s", got, want)
	}
}

// Jedis's md5 hash places points in 32 bits, where two named shards'
// points can fall on one position; the later shard of the list wins it,
// so the order of named shards then decides where some keys go, and the
// IDs of two such orders must differ.
func TestReview18TopologyIDJedisTieKeepsOrder(t *testing.T) {
	a := ring.Shard{Name: "a", Addr: "10.0.0.1:6379", Weight: 100}
	var pair []ring.Shard
	for k := 0; k < 1000 && pair == nil; k++ {
		b := ring.Shard{Name: fmt.Sprintf("b-%d", k), Addr: "10.0.0.2:6379", Weight: 100}
		r, err := ring.New(ring.Config{Algorithm: ring.Jedis, KeyHash: "md5", Shards: []ring.Shard{a, b}})
		if err != nil {
			t.Fatal(err)
		}
		if r.Points() < 2*100*ring.JedisPointsPerWeight {
			pair = []ring.Shard{a, b}
		}
	}
	if pair == nil {
		t.Fatal("no name of 1,000 gives a point on one of a's")
	}
	ab := shard.Config{Hash: ring.Jedis, KeyHash: "md5", Shards: pair}
	ba := shard.Config{Hash: ring.Jedis, KeyHash: "md5", Shards: []ring.Shard{pair[1], pair[0]}}
	const keys = 1_000_000
	if slices.Equal(review18Placement(t, ab, keys), review18Placement(t, ba, keys)) {
		t.Fatalf("shards %s and %s share a point, yet both orders place %d keys alike", pair[0].Name, pair[1].Name, keys)
	}
	if idA, idB := shard.TopologyID(ab), shard.TopologyID(ba); idA == idB {
		t.Errorf("%s,%s and %s,%s place keys otherwise, but share the ID %s", pair[0].Name, pair[1].Name, pair[1].Name, pair[0].Name, idA)
	}
}

// Two processes that list the same named shards in two orders route every
// key alike and say so to the mover: their connections on the servers
// carry one topology name.
func TestReview18ReorderedShardsNameConnectionsAlike(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	first := ringConfig(servers)
	first.Pool.ClientName = shard.AutoClientName
	second := first
	second.Shards = slices.Clone(first.Shards)
	slices.Reverse(second.Shards)
	a, b := newClient(t, first), newClient(t, second)
	for i := range 200 {
		key := fmt.Sprintf("k%d", i)
		_, err := a.Do(ctx, "SET", key, "a")
		require.NoError(t, err)
		v, err := b.Do(ctx, "GET", key)
		require.NoError(t, err)
		require.Equal(t, []byte("a"), v, "key %s: the second process reads another node", key)
	}
	var namesA, namesB map[string]int
	waitFor(t, 10*time.Second, "both clients' connections named", func() bool {
		namesA, namesB = instanceNames(t, servers, a.InstanceID()), instanceNames(t, servers, b.InstanceID())
		return len(namesA) > 0 && len(namesB) > 0
	})
	require.Equal(t, slices.Sorted(maps.Keys(namesA)), slices.Sorted(maps.Keys(namesB)),
		"one placement, named as two topologies")
}
