package shard_test

import (
	"fmt"
	"hash/fnv"
	"testing"

	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// A ring's TopologyID names its placement: configs that spell the same
// placement differently (defaults left unset or written out, the tag pair
// "{}" or its name "cluster") share an ID, so that the mover takes their
// processes for one topology; configs that place keys differently do not.
func TestReview15TopologyIDNamesThePlacementNotItsSpelling(t *testing.T) {
	shards := []ring.Shard{{Name: "a", Addr: "127.0.0.1:7001", Weight: 1}, {Name: "b", Addr: "127.0.0.1:7002", Weight: 2}}
	cfg := func(alg ring.Algorithm, keyHash, tag string) shard.Config {
		return shard.Config{Hash: alg, KeyHash: keyHash, Tag: tag, Shards: shards}
	}
	// Each group is one placement; its configs must share an ID, and no
	// two groups may.
	groups := []struct {
		name string
		cfgs []shard.Config
	}{
		{"murmur3, cluster tag", []shard.Config{
			cfg("", "", ""), cfg(ring.Murmur3, "", ""), cfg("", "murmur3", ""), cfg("", "", "cluster"),
			cfg("", "", "{}"), cfg(ring.Murmur3, "murmur3", "cluster"), cfg(ring.Murmur3, "murmur3", "{}"),
		}},
		{"murmur3, whole keys", []shard.Config{cfg("", "", "none"), cfg(ring.Murmur3, "murmur3", "none")}},
		{"murmur3, jedis tag", []shard.Config{cfg("", "", "jedis")}},
		{"murmur3, [] tag", []shard.Config{cfg("", "", "[]")}},
		{"jedis, whole keys", []shard.Config{cfg(ring.Jedis, "", ""), cfg(ring.Jedis, "murmur", "none"), cfg(ring.Jedis, "", "none")}},
		{"jedis, md5", []shard.Config{cfg(ring.Jedis, "md5", ""), cfg(ring.Jedis, "md5", "none")}},
		{"jedis, cluster tag", []shard.Config{cfg(ring.Jedis, "", "cluster"), cfg(ring.Jedis, "murmur", "{}")}},
		{"jedis-legacy", []shard.Config{cfg(ring.JedisLegacy, "", ""), cfg(ring.JedisLegacy, "murmur", "none")}},
		{"ketama", []shard.Config{cfg(ring.Ketama, "", ""), cfg(ring.Ketama, "fnv1a_64", "none")}},
		{"ketama, md5", []shard.Config{cfg(ring.Ketama, "md5", "")}},
		{"ketama, {} tag", []shard.Config{cfg(ring.Ketama, "", "{}"), cfg(ring.Ketama, "fnv1a_64", "cluster")}},
		{"modula", []shard.Config{cfg(ring.Modula, "", ""), cfg(ring.Modula, "fnv1a_64", "none")}},
	}
	owner := map[string]string{}
	for _, g := range groups {
		id := shard.TopologyID(g.cfgs[0])
		for _, c := range g.cfgs[1:] {
			if got := shard.TopologyID(c); got != id {
				t.Errorf("%s: hash %q, key hash %q, tag %q: ID %s, want %s (as hash %q, key hash %q, tag %q)",
					g.name, c.Hash, c.KeyHash, c.Tag, got, id, g.cfgs[0].Hash, g.cfgs[0].KeyHash, g.cfgs[0].Tag)
			}
		}
		if o, dup := owner[id]; dup {
			t.Errorf("%s and %s place keys differently but share ID %s", o, g.name, id)
		}
		owner[id] = g.name
	}

	// A config that leaves the settings unset keeps the ID it always had:
	// processes of an older version name their connections by it.
	h := fnv.New64a()
	fmt.Fprint(h, "ring|||", "|a=127.0.0.1:7001*1", "|b=127.0.0.1:7002*2")
	if got, want := shard.TopologyID(cfg("", "", "")), fmt.Sprintf("ring-%x", h.Sum64()); got != want {
		t.Errorf("unset settings: ID %s, want %s as before", got, want)
	}
}
