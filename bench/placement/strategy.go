package placement

import (
	"errors"
	"fmt"
	"strings"

	"github.com/shardis/shardis/bench"
	"github.com/shardis/shardis/ring"
)

// ErrUnknownStrategy means a strategy name is not one of Strategies.
var ErrUnknownStrategy = errors.New("shardis: unknown placement strategy")

// ErrBadInput is wrapped by the errors about the inputs of a comparison:
// no keys, an empty or invalid layout, a key pattern without "{id}".
var ErrBadInput = errors.New("shardis: bad placement input")

// Router places keys on the shards of one layout: Locate returns an index
// into the layout's shard list.
type Router interface {
	Locate(key string) int
}

// strategy is one way of placing keys. build makes the router of a layout;
// add and remove make the router after one shard was appended to, or shard
// i taken out of, that layout, starting from the router build returned (the
// slots strategy moves slots from the old table; the others simply build
// the new layout).
type strategy struct {
	name    string
	summary string
	weights bool // honours shard weights
	build   func(shards []ring.Shard) (Router, error)
	add     func(base Router, shards []ring.Shard, s ring.Shard) (Router, error)
	remove  func(base Router, shards []ring.Shard, i int) (Router, error)
}

// Strategies lists the names of the strategies Run knows, in the order
// reports show them: murmur3, jedis, ketama, modula, slots, rendezvous,
// jump.
func Strategies() []string {
	out := make([]string, len(strategies))
	for i, s := range strategies {
		out[i] = s.name
	}
	return out
}

// Describe returns a one-line description of the named strategy, and false
// when the name is unknown.
func Describe(name string) (string, bool) {
	s, ok := lookupStrategy(name)
	if !ok {
		return "", false
	}
	return s.summary, true
}

// HonoursWeights reports whether the named strategy gives shards shares
// proportional to their weights. Run skips the others on weighted layouts.
func HonoursWeights(name string) bool {
	s, ok := lookupStrategy(name)
	return ok && s.weights
}

// ParseStrategies splits a comma-separated list of strategy names, checking
// each one. An empty list means every strategy.
func ParseStrategies(list string) ([]string, error) {
	if strings.TrimSpace(list) == "" {
		return Strategies(), nil
	}
	var out []string
	seen := map[string]bool{}
	for _, f := range strings.Split(list, ",") {
		name := strings.TrimSpace(f)
		if _, ok := lookupStrategy(name); !ok {
			return nil, fmt.Errorf("%w: %q (known: %s)", ErrUnknownStrategy, name, strings.Join(Strategies(), ", "))
		}
		if !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	return out, nil
}

func lookupStrategy(name string) (strategy, bool) {
	for _, s := range strategies {
		if s.name == name {
			return s, true
		}
	}
	return strategy{}, false
}

var strategies = []strategy{
	ringStrategy(ring.Murmur3, "shardis's own ring: 1024 MurmurHash3 points per unit of weight"),
	ringStrategy(ring.Jedis, "Jedis ShardedJedis: 160 MurmurHash64A points per unit of weight"),
	ringStrategy(ring.Ketama, "twemproxy ketama: 160 MD5 points per server, scaled by weight; fnv1a_64 keys"),
	ringStrategy(ring.Modula, "twemproxy modula: fnv1a_64(key) mod total weight"),
	{
		name:    "slots",
		summary: "Redis Cluster: CRC16 slot, slots in contiguous ranges as redis-cli --cluster create assigns them",
		weights: true,
		build:   buildSlots,
		add:     addSlots,
		remove:  removeSlots,
	},
	{
		name:    "rendezvous",
		summary: "baseline: rendezvous hashing as the go-redis Ring client does it (xxhash, one score per shard)",
		build: func(shards []ring.Shard) (Router, error) {
			names := make([]string, len(shards))
			for i, s := range shards {
				names[i] = s.Label()
			}
			return bench.NewRendezvous(names), nil
		},
	},
	{
		name:    "jump",
		summary: "baseline: Lamping-Veach jump consistent hash over xxhash (buckets added or removed at the end only)",
		build: func(shards []ring.Shard) (Router, error) {
			return jumpRouter(len(shards)), nil
		},
	},
}

func ringStrategy(a ring.Algorithm, summary string) strategy {
	return strategy{
		name:    string(a),
		summary: summary,
		weights: true,
		build: func(shards []ring.Shard) (Router, error) {
			return ring.New(ring.Config{Algorithm: a, Shards: shards})
		},
	}
}

// jumpRouter is the jump hash over n buckets; bucket i is shard i.
type jumpRouter int

// Locate returns the jump hash bucket of key.
func (n jumpRouter) Locate(key string) int { return bench.Jump(key, int(n)) }
