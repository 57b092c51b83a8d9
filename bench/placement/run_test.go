package placement

import (
	"context"
	"math"
	"runtime"
	"testing"
	"time"

	"github.com/shardis/shardis/bench"
	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/ring"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// quick keeps lookup timing short in tests.
var quick = Options{LookupTime: time.Millisecond}

func keysT(t *testing.T, n int) []string {
	t.Helper()
	keys, err := GenerateKeys(DefaultPattern, n)
	require.NoError(t, err)
	return keys
}

func runT(t *testing.T, keys []string, strategies []string, layouts ...Layout) *Report {
	t.Helper()
	opts := quick
	opts.Strategies = strategies
	opts.Layouts = layouts
	rep, err := Run(context.Background(), keys, opts)
	require.NoError(t, err)
	require.Len(t, rep.Results, len(strategies)*len(layouts))
	return rep
}

// locators computes placements independently of Run: straight from package
// ring, bench and cluster, without the strategy table.
func directLocate(t *testing.T, strategy string, shards []ring.Shard) func(string) int {
	t.Helper()
	switch strategy {
	case "murmur3", "jedis", "ketama", "modula":
		r, err := ring.New(ring.Config{Algorithm: ring.Algorithm(strategy), Shards: shards})
		require.NoError(t, err)
		return r.Locate
	case "jump":
		return func(k string) int { return bench.Jump(k, len(shards)) }
	case "rendezvous":
		names := make([]string, len(shards))
		for i, s := range shards {
			names[i] = s.Label()
		}
		return bench.NewRendezvous(names).Locate
	case "slots":
		// Equal weights only: n contiguous ranges as redis-cli assigns them.
		n := len(shards)
		return func(k string) int {
			slot := cluster.Slot(k)
			for i := 0; i < n; i++ {
				last := int(math.Round(float64(float32(i+1)*(float32(cluster.SlotCount)/float32(n)) - 1)))
				if i == n-1 || slot <= last {
					return i
				}
			}
			return n - 1
		}
	}
	t.Fatalf("no direct placement for %s", strategy)
	return nil
}

func TestBalanceMatchesDirectCount(t *testing.T) {
	keys := keysT(t, 20000)
	layouts := []Layout{EqualLayout(3), EqualLayout(10)}
	rep := runT(t, keys, Strategies(), layouts...)
	for _, res := range rep.Results {
		t.Run(res.Strategy+"/"+res.Layout, func(t *testing.T) {
			var l Layout
			for _, x := range layouts {
				if x.Name == res.Layout {
					l = x
				}
			}
			locate := directLocate(t, res.Strategy, l.Shards)
			counts := make([]int, len(l.Shards))
			for _, k := range keys {
				counts[locate(k)]++
			}
			fair := float64(len(keys)) / float64(len(l.Shards))
			lo, hi, sum := math.Inf(1), math.Inf(-1), 0.0
			for i, c := range counts {
				assert.Equal(t, c, res.Balance.Shards[i].Keys, "shard %d", i)
				pct := 100 * float64(c) / fair
				lo, hi, sum = min(lo, pct), max(hi, pct), sum+pct
			}
			mean, sq := sum/float64(len(counts)), 0.0
			for _, c := range counts {
				d := 100*float64(c)/fair - mean
				sq += d * d
			}
			assert.InDelta(t, lo, res.Balance.MinPct, 1e-9)
			assert.InDelta(t, hi, res.Balance.MaxPct, 1e-9)
			assert.InDelta(t, math.Sqrt(sq/float64(len(counts))), res.Balance.StddevPct, 1e-9)
		})
	}
}

func TestMovementMatchesDirectCount(t *testing.T) {
	keys := keysT(t, 20000)
	l := EqualLayout(10)
	rep := runT(t, keys, Strategies(), l)
	grown := append(append([]ring.Shard(nil), l.Shards...), GeneratedShard(11, 1))
	shrunk := l.Shards[:9]
	for _, res := range rep.Results {
		if res.Strategy == "slots" {
			continue // slots move by rebalancing, tested below
		}
		t.Run(res.Strategy, func(t *testing.T) {
			old := directLocate(t, res.Strategy, l.Shards)
			for _, c := range []struct {
				name   string
				shards []ring.Shard
				got    Movement
				ideal  float64
				gone   string // the shard only the old layout has
				fresh  string // the shard only the new layout has
			}{
				{"add", grown, res.Add, 100.0 / 11, "", "shard-11"},
				{"remove", shrunk, res.Remove, 100.0 / 10, "shard-10", ""},
			} {
				next := directLocate(t, res.Strategy, c.shards)
				moved, between := 0, 0
				for _, k := range keys {
					from, to := l.Shards[old(k)].Name, c.shards[next(k)].Name
					if from != to {
						moved++
						if from != c.gone && to != c.fresh {
							between++
						}
					}
				}
				assert.Equal(t, moved, c.got.Moved, c.name)
				assert.Equal(t, between, c.got.BetweenSurvivors, c.name)
				assert.InDelta(t, 100*float64(moved)/float64(len(keys)), c.got.MovedPct, 1e-9, c.name)
				assert.InDelta(t, c.ideal, c.got.IdealPct, 1e-9, c.name)
			}
			assert.Equal(t, "shard-11", res.Add.Shard)
			assert.Equal(t, "shard-10", res.Remove.Shard)
		})
	}
}

func TestRingMovementAgreesWithRingDiffKeys(t *testing.T) {
	keys := keysT(t, 20000)
	l := EqualLayout(10)
	rep := runT(t, keys, []string{"murmur3", "jedis", "ketama", "modula"}, l)
	grown := append(append([]ring.Shard(nil), l.Shards...), GeneratedShard(11, 1))
	for _, res := range rep.Results {
		a, err := ring.New(ring.Config{Algorithm: ring.Algorithm(res.Strategy), Shards: l.Shards})
		require.NoError(t, err)
		b, err := ring.New(ring.Config{Algorithm: ring.Algorithm(res.Strategy), Shards: grown})
		require.NoError(t, err)
		m := ring.DiffKeys(a, b, keys)
		assert.InDelta(t, 100*m.Moved, res.Add.MovedPct, 1e-9, res.Strategy)
		assert.InDelta(t, 100*m.BetweenSurvivors, res.Add.BetweenSurvivorsPct, 1e-9, res.Strategy)
	}
}

func TestConsistentStrategiesMoveNothingBetweenSurvivors(t *testing.T) {
	keys := keysT(t, 20000)
	rep := runT(t, keys, []string{"murmur3", "jedis", "slots", "rendezvous", "jump"}, DefaultLayouts()...)
	for _, res := range rep.Results {
		if res.Skipped != "" {
			assert.Contains(t, []string{"rendezvous", "jump"}, res.Strategy)
			assert.True(t, res.Weighted)
			continue
		}
		assert.Zero(t, res.Add.BetweenSurvivors, "%s %s add", res.Strategy, res.Layout)
		assert.Zero(t, res.Remove.BetweenSurvivors, "%s %s remove", res.Strategy, res.Layout)
		// Within 2 points of the ideal fraction (sampling noise of 20k keys).
		assert.InDelta(t, res.Add.IdealPct, res.Add.MovedPct, 2, "%s %s add", res.Strategy, res.Layout)
		assert.InDelta(t, res.Remove.IdealPct, res.Remove.MovedPct, 2, "%s %s remove", res.Strategy, res.Layout)
	}
}

func TestModulaMovesMostKeys(t *testing.T) {
	keys := keysT(t, 20000)
	rep := runT(t, keys, []string{"modula"}, EqualLayout(3), EqualLayout(10), EqualLayout(100))
	for _, res := range rep.Results {
		// Adding the n+1st server keeps a key only when h mod n == h mod
		// (n+1): about 1/(n+1) of them.
		keep := 100.0 / float64(res.Shards+1)
		assert.InDelta(t, 100-keep, res.Add.MovedPct, 3, res.Layout)
		assert.Greater(t, res.Add.BetweenSurvivorsPct, 40.0, res.Layout)
		assert.Greater(t, res.Remove.MovedPct, 60.0, res.Layout)
	}
}

func TestWeightedSharesFollowWeights(t *testing.T) {
	keys := keysT(t, 100000)
	l := WeightedLayout(1, 2, 3, 4)
	rep := runT(t, keys, Strategies(), l)
	for _, res := range rep.Results {
		if !HonoursWeights(res.Strategy) {
			assert.NotEmpty(t, res.Skipped, res.Strategy)
			continue
		}
		require.Empty(t, res.Skipped, res.Strategy)
		for i, s := range res.Balance.Shards {
			assert.InDelta(t, 10.0*float64(i+1), s.WeightPct, 1e-9)
			assert.InEpsilon(t, s.WeightPct, s.SharePct, 0.10, "%s %s", res.Strategy, s.Label)
		}
		assert.GreaterOrEqual(t, res.Balance.MinPct, 90.0, res.Strategy)
		assert.LessOrEqual(t, res.Balance.MaxPct, 110.0, res.Strategy)
		// The removed shard (weight 4 of 10) should take 40% of the keys
		// with it; the added one (weight 1 of 11) should get 1/11.
		assert.InDelta(t, 40, res.Remove.IdealPct, 1e-9)
		assert.InDelta(t, 100.0/11, res.Add.IdealPct, 1e-9)
	}
}

func TestLookupAndMemoryAreMeasured(t *testing.T) {
	keys := keysT(t, 5000)
	rep := runT(t, keys, Strategies(), EqualLayout(10))
	for _, res := range rep.Results {
		assert.Positive(t, res.Lookup.NsPerOp, res.Strategy)
		assert.Positive(t, res.Lookup.Lookups, res.Strategy)
		assert.Less(t, res.Lookup.AllocsPerOp, 0.01, "%s allocates per lookup", res.Strategy)
		switch res.Strategy {
		case "murmur3":
			// 10 x 1024 points of at least 8 + 4 bytes (position, owner),
			// plus the ring's lookup index: up to eight buckets per point
			// for a ring this small, each a 4-byte start and a 16-byte
			// owners entry (the owners table is capped at 2^16 entries).
			assert.GreaterOrEqual(t, res.MemoryBytes, int64(10*1024*12))
			assert.Less(t, res.MemoryBytes, int64(10*1024*12+(1<<16)*20+64*1024))
		case "slots":
			assert.InDelta(t, 16384*2, float64(res.MemoryBytes), 1024)
		case "jump":
			assert.Less(t, res.MemoryBytes, int64(16))
		}
	}
	assert.NotEmpty(t, rep.Method.Lookup)
	assert.NotEmpty(t, rep.Method.Memory)
	assert.Equal(t, 5000, rep.Keys)
	if runtime.GOOS == "linux" {
		assert.Regexp(t, `^\d+\.\d+ -> \d+\.\d+$`, rep.Environment.Load)
	}
}

func TestRunStopsWhenContextEnds(t *testing.T) {
	keys := keysT(t, 1000)
	ctx, cancel := context.WithCancel(context.Background())
	opts := quick
	opts.Progress = func(done, total int) {
		if done == 2 {
			cancel()
		}
	}
	rep, err := Run(ctx, keys, opts)
	require.ErrorIs(t, err, context.Canceled)
	require.NotNil(t, rep)
	assert.True(t, rep.Interrupted)
	assert.Len(t, rep.Results, 2)
}

func TestRunRejectsBadInput(t *testing.T) {
	keys := keysT(t, 10)
	dup := Layout{Name: "dup", Shards: []ring.Shard{GeneratedShard(1, 1), GeneratedShard(1, 1)}}
	zero := Layout{Name: "zero", Shards: []ring.Shard{GeneratedShard(1, 0)}}
	for name, c := range map[string]struct {
		keys []string
		opts Options
		want error
	}{
		"no keys":          {nil, quick, ErrBadInput},
		"unknown strategy": {keys, Options{Strategies: []string{"crc32"}}, ErrUnknownStrategy},
		"empty layout":     {keys, Options{Layouts: []Layout{{Name: "none"}}}, ErrBadInput},
		"duplicate shards": {keys, Options{Layouts: []Layout{dup}}, ErrBadInput},
		"zero weight":      {keys, Options{Layouts: []Layout{zero}}, ErrBadInput},
	} {
		t.Run(name, func(t *testing.T) {
			rep, err := Run(context.Background(), c.keys, c.opts)
			assert.ErrorIs(t, err, c.want)
			assert.Nil(t, rep)
			assert.Regexp(t, "^shardis: ", err.Error())
		})
	}
}

func TestParseStrategies(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
		err  bool
	}{
		{"", Strategies(), false},
		{"jump", []string{"jump"}, false},
		{" slots , murmur3,slots", []string{"slots", "murmur3"}, false},
		{"murmur3,", nil, true},
		{"md5", nil, true},
	} {
		got, err := ParseStrategies(c.in)
		if c.err {
			assert.ErrorIs(t, err, ErrUnknownStrategy, c.in)
			continue
		}
		require.NoError(t, err, c.in)
		assert.Equal(t, c.want, got, c.in)
	}
	for _, name := range Strategies() {
		d, ok := Describe(name)
		assert.True(t, ok)
		assert.NotEmpty(t, d)
	}
	_, ok := Describe("nope")
	assert.False(t, ok)
	assert.False(t, HonoursWeights("jump"))
	assert.True(t, HonoursWeights("slots"))
}
