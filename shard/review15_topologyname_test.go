package shard_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// placementOf returns where a ring built from cfg puts each of many keys,
// by server address: two configs with the same result place keys alike.
func placementOf(t *testing.T, cfg shard.Config) string {
	t.Helper()
	r, err := ring.New(cfg.RingConfig())
	if err != nil {
		t.Fatalf("ring.New(%v): %v", cfg, err)
	}
	shards := r.Shards()
	var b strings.Builder
	for k := range 4000 {
		b.WriteString(shards[r.Locate(fmt.Sprintf("key:%d", k))].Addr)
		b.WriteByte(',')
	}
	return b.String()
}

// A shard's Name takes part in its ring's TopologyID as the placement
// uses it: murmur3 names a shard by its Name, else its address; ketama and
// modula by their continuum name (Name, else the address, else the host
// when the port is 11211); jedis places an unnamed shard by its list
// position and a named one by its Name. Configs that spell one placement
// with different names share an ID, and configs that place keys otherwise
// do not. Which configs place keys alike is read from the rings themselves.
func TestReview15TopologyIDFollowsShardNamesAsThePlacementUsesThem(t *testing.T) {
	const a0, a1 = "127.0.0.1:11211", "127.0.0.1:7002"
	names := [][2]string{
		{"", ""},
		{a0, ""},
		{"127.0.0.1", ""},
		{"", a1},
		{a0, a1},
		{"127.0.0.1", a1},
		{"a", ""},
		{"a", "b"},
	}
	for _, alg := range []ring.Algorithm{ring.Murmur3, ring.Jedis, ring.JedisLegacy, ring.Ketama, ring.Modula} {
		t.Run(string(alg), func(t *testing.T) {
			cfgs := make([]shard.Config, len(names))
			for i, n := range names {
				cfgs[i] = shard.Config{Hash: alg, Shards: []ring.Shard{
					{Name: n[0], Addr: a0, Weight: 1}, {Name: n[1], Addr: a1, Weight: 2},
				}}
			}
			for i := range cfgs {
				for j := i + 1; j < len(cfgs); j++ {
					same := placementOf(t, cfgs[i]) == placementOf(t, cfgs[j])
					idI, idJ := shard.TopologyID(cfgs[i]), shard.TopologyID(cfgs[j])
					if same != (idI == idJ) {
						t.Errorf("names %q and %q: same placement %t, but IDs %s and %s", names[i], names[j], same, idI, idJ)
					}
				}
			}
		})
	}
}

// Config.String shows a migration's old topology by its TopologyID, and
// both fill in the ring's defaults: neither builds a ring (1024 points a
// unit of weight for murmur3) to learn them, so String stays cheap.
func TestReview15ConfigStringBuildsNoRing(t *testing.T) {
	shards := []ring.Shard{{Name: "a", Addr: "127.0.0.1:7001", Weight: 1}, {Name: "b", Addr: "127.0.0.1:7002", Weight: 1}}
	from := shard.Config{Shards: shards}
	cfg := shard.Config{Shards: shards, Hash: ring.Murmur3, Migration: &shard.Migration{From: &from}}
	_ = cfg.String()
	// A one-shard murmur3 ring alone holds 1024 8-byte positions.
	const ringBytes = ring.Murmur3PointsPerWeight * 8
	res := testing.Benchmark(func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			_ = cfg.String()
		}
	})
	if per := res.AllocedBytesPerOp(); per >= ringBytes {
		t.Errorf("Config.String allocates %d bytes a call, as much as a ring of %d bytes", per, ringBytes)
	}
}
