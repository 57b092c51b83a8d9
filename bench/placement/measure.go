package placement

import (
	"fmt"
	"math"
	"runtime"
	"time"

	"github.com/shardis/shardis/ring"
)

// locateAll places every key, checking that each index is in range.
func locateAll(r Router, keys []string, n int) ([]int32, error) {
	locs := make([]int32, len(keys))
	for i, k := range keys {
		idx := r.Locate(k)
		if idx < 0 || idx >= n {
			return nil, fmt.Errorf("shardis: placement of key %q: shard index %d out of range [0, %d)", k, idx, n)
		}
		locs[i] = int32(idx)
	}
	return locs, nil
}

// balance counts the keys of every shard and compares them with the
// shards' fair shares.
func balance(shards []ring.Shard, locs []int32) Balance {
	counts := make([]int, len(shards))
	for _, l := range locs {
		counts[l]++
	}
	total := 0
	for _, s := range shards {
		total += s.Weight
	}
	b := Balance{MinPct: math.Inf(1), MaxPct: math.Inf(-1), Shards: make([]ShardShare, len(shards))}
	ratios := make([]float64, len(shards))
	mean := 0.0
	for i, s := range shards {
		fair := float64(len(locs)) * float64(s.Weight) / float64(total)
		ratios[i] = 100 * float64(counts[i]) / fair
		mean += ratios[i]
		b.MinPct = math.Min(b.MinPct, ratios[i])
		b.MaxPct = math.Max(b.MaxPct, ratios[i])
		b.Shards[i] = ShardShare{
			Label:     s.Label(),
			Weight:    s.Weight,
			Keys:      counts[i],
			SharePct:  100 * float64(counts[i]) / float64(len(locs)),
			WeightPct: 100 * float64(s.Weight) / float64(total),
		}
	}
	mean /= float64(len(shards))
	sum := 0.0
	for _, r := range ratios {
		sum += (r - mean) * (r - mean)
	}
	b.StddevPct = math.Sqrt(sum / float64(len(shards)))
	return b
}

// movement compares the placement locs of keys on oldShards with their
// placement by next on newShards, matching shards by label.
func movement(oldShards, newShards []ring.Shard, locs []int32, next Router, keys []string) (Movement, error) {
	newLocs, err := locateAll(next, keys, len(newShards))
	if err != nil {
		return Movement{}, err
	}
	inNew := map[string]bool{}
	for _, s := range newShards {
		inNew[s.Label()] = true
	}
	inOld := map[string]bool{}
	for _, s := range oldShards {
		inOld[s.Label()] = true
	}
	var m Movement
	for i := range keys {
		from, to := oldShards[locs[i]].Label(), newShards[newLocs[i]].Label()
		if from == to {
			continue
		}
		m.Moved++
		if inNew[from] && inOld[to] {
			m.BetweenSurvivors++
		}
	}
	m.MovedPct = 100 * float64(m.Moved) / float64(len(keys))
	m.BetweenSurvivorsPct = 100 * float64(m.BetweenSurvivors) / float64(len(keys))
	return m, nil
}

// lookupChunk is how many keys are looked up between two clock readings.
const lookupChunk = 4096

// lookupTimer times the lookups of one router in rounds: each round looks
// keys up, cycling through them from where the last round stopped, for at
// least its budget and at least lookupChunk lookups. The figures kept are
// those of the fastest round, the one least disturbed by other work on the
// machine.
type lookupTimer struct {
	r    Router
	keys []string
	next int // the key the next round starts at
	best Lookup
}

// round runs one timed round. Allocations come from
// runtime.MemStats.Mallocs read before and after the loop.
func (t *lookupTimer) round(budget time.Duration) {
	sink := 0
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	var n int64
	i := t.next
	for {
		end := min(i+lookupChunk, len(t.keys))
		for _, k := range t.keys[i:end] {
			sink += t.r.Locate(k)
		}
		n += int64(end - i)
		i = end
		if i == len(t.keys) {
			i = 0
		}
		if time.Since(start) >= budget {
			break
		}
	}
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(sink)
	t.next = i
	l := Lookup{
		NsPerOp:     float64(elapsed.Nanoseconds()) / float64(n),
		AllocsPerOp: float64(after.Mallocs-before.Mallocs) / float64(n),
		Lookups:     n,
	}
	if t.best.Lookups == 0 || l.NsPerOp < t.best.NsPerOp {
		l.Lookups += t.best.Lookups
		t.best = l
	} else {
		t.best.Lookups += n
	}
}

// buildMeasured builds a router and returns it with the heap it keeps:
// HeapAlloc after a forced collection, minus the same before construction.
// Small structures are built memoCopies times over and the difference
// divided, so that a few bytes of runtime noise do not swamp them.
func buildMeasured(build func() (Router, error)) (Router, int64, error) {
	r, mem, err := heapDelta(build, 1)
	if err != nil || mem >= smallRouter {
		return r, mem, err
	}
	_, mem, err = heapDelta(build, memoCopies)
	return r, mem, err
}

const (
	// smallRouter is the size under which buildMeasured builds copies.
	smallRouter = 256 << 10
	// memoCopies is how many copies of a small router are measured.
	memoCopies = 64
)

// heapDelta builds copies routers and returns the first and the heap each
// one keeps, rounded to the nearest byte.
func heapDelta(build func() (Router, error), copies int) (Router, int64, error) {
	kept := make([]Router, copies)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range kept {
		r, err := build()
		if err != nil {
			return nil, 0, err
		}
		kept[i] = r
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(kept)
	mem := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	return kept[0], max((mem+int64(copies)/2)/int64(copies), 0), nil
}
