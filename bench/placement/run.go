package placement

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/shardis/shardis/bench"
	"github.com/shardis/shardis/ring"
)

// DefaultLookupTime is how long Run times lookups for each strategy and
// layout unless Options says otherwise.
const DefaultLookupTime = 200 * time.Millisecond

// Options configures Run. The zero value compares every strategy on
// DefaultLayouts.
type Options struct {
	// Strategies names the strategies to compare (see Strategies); nil
	// means all of them.
	Strategies []string
	// Layouts are the shard layouts to measure on; nil means
	// DefaultLayouts().
	Layouts []Layout
	// LookupTime is the time spent timing lookups per strategy and
	// layout, split into rounds; 0 means DefaultLookupTime.
	LookupTime time.Duration
	// KeySource describes the keys in the report, e.g. a file name.
	KeySource string
	// Progress, when not nil, is called after each strategy and layout
	// with the number done and the total.
	Progress func(done, total int)
}

// Run places keys with every strategy on every layout and measures
// balance, movement, lookup cost and memory (see Report). Strategies that
// ignore weights (rendezvous, jump) are skipped on weighted layouts, with
// the reason in Result.Skipped.
//
// Run works on one goroutine and does no I/O. It checks ctx between
// measurements: when ctx ends it returns the results measured so far, with
// Report.Interrupted set, together with ctx's error. Other errors (unknown
// strategy, no keys, invalid layout) come with a nil Report.
func Run(ctx context.Context, keys []string, opts Options) (*Report, error) {
	if len(keys) == 0 {
		return nil, fmt.Errorf("%w: no keys to place", ErrBadInput)
	}
	names := opts.Strategies
	if names == nil {
		names = Strategies()
	}
	strats := make([]strategy, len(names))
	for i, n := range names {
		s, ok := lookupStrategy(n)
		if !ok {
			return nil, fmt.Errorf("%w: %q", ErrUnknownStrategy, n)
		}
		strats[i] = s
	}
	layouts := opts.Layouts
	if layouts == nil {
		layouts = DefaultLayouts()
	}
	for _, l := range layouts {
		if err := l.validate(); err != nil {
			return nil, err
		}
	}
	budget := opts.LookupTime
	if budget <= 0 {
		budget = DefaultLookupTime
	}
	load := bench.LoadAverage()
	rep := &Report{
		Keys:       len(keys),
		KeySource:  opts.KeySource,
		Strategies: append([]string(nil), names...),
		Layouts:    layouts,
		Method:     methods(budget),
		Environment: Environment{
			GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU(),
		},
	}
	// Place and move keys strategy by strategy; then time the lookups of
	// all of them in interleaved rounds, so that a burst of other work on
	// the machine hits every strategy alike.
	total, done := len(strats)*len(layouts)*(1+lookupRounds), 0
	step := func() {
		done++
		if opts.Progress != nil {
			opts.Progress(done, total)
		}
	}
	defer func() { rep.Environment.Load = bench.LoadSpan(load) }()
	var timers []*lookupTimer
	for _, s := range strats {
		for _, l := range layouts {
			if err := ctx.Err(); err != nil {
				rep.Interrupted = true
				return rep, err
			}
			res, base, err := measure(s, l, keys)
			if err != nil {
				return nil, fmt.Errorf("shardis: %s on %s: %w", s.name, l.Name, err)
			}
			rep.Results = append(rep.Results, res)
			var t *lookupTimer
			if base != nil {
				t = &lookupTimer{r: base, keys: keys}
			}
			timers = append(timers, t)
			step()
		}
	}
	for range lookupRounds {
		for i, t := range timers {
			if err := ctx.Err(); err != nil {
				rep.Interrupted = true
				return rep, err
			}
			if t != nil {
				t.round(budget / lookupRounds)
				rep.Results[i].Lookup = t.best
			}
			step()
		}
	}
	return rep, nil
}

// lookupRounds is the number of rounds lookups are timed in.
const lookupRounds = 5

func methods(budget time.Duration) Method {
	return Method{
		Balance: "every key is placed once; a shard's fair share is keys x weight / total weight; " +
			"min, max and standard deviation are of keys / fair share over the shards",
		Movement: "every key is placed again after appending one shard (the smallest weight of the layout) " +
			"and after removing the last shard (the only one jump hash can remove); shards are matched by label; " +
			"ideal = the added shard's fair share, or the removed shard's",
		Lookup: fmt.Sprintf("a timed loop over the same keys, through one Router interface for every strategy, "+
			"in %d rounds of %v per strategy and layout, interleaved across strategies; the fastest round counts; "+
			"allocations from runtime.MemStats.Mallocs before and after the loop", lookupRounds, budget/lookupRounds),
		Memory: "measured, not computed from point counts: runtime.MemStats.HeapAlloc after a forced GC, " +
			"after building the router minus before (for routers under 256 KiB, 64 copies are built and the figure divided)",
	}
}

// measure runs every measurement but lookup timing of one strategy on one
// layout, and returns the router it built (nil when skipped).
func measure(s strategy, l Layout, keys []string) (Result, Router, error) {
	res := Result{Strategy: s.name, Layout: l.Name, Shards: len(l.Shards), Weighted: l.Weighted()}
	if res.Weighted && !s.weights {
		res.Skipped = "no weights"
		return res, nil, nil
	}
	shards := l.Shards
	base, mem, err := buildMeasured(func() (Router, error) { return s.build(shards) })
	if err != nil {
		return res, nil, err
	}
	res.MemoryBytes = mem
	locs, err := locateAll(base, keys, len(shards))
	if err != nil {
		return res, nil, err
	}
	res.Balance = balance(shards, locs)

	// Add one shard.
	extra := addedShard(l)
	grown := append(append([]ring.Shard(nil), shards...), extra)
	var next Router
	if s.add != nil {
		next, err = s.add(base, shards, extra)
	} else {
		next, err = s.build(grown)
	}
	if err != nil {
		return res, nil, fmt.Errorf("add %s: %w", extra.Label(), err)
	}
	if res.Add, err = movement(shards, grown, locs, next, keys); err != nil {
		return res, nil, err
	}
	res.Add.Shard = extra.Label()
	res.Add.IdealPct = 100 * float64(extra.Weight) / float64(l.TotalWeight()+extra.Weight)

	// Remove the last shard.
	if len(shards) > 1 {
		last := len(shards) - 1
		shrunk := shards[:last:last]
		if s.remove != nil {
			next, err = s.remove(base, shards, last)
		} else {
			next, err = s.build(shrunk)
		}
		if err != nil {
			return res, nil, fmt.Errorf("remove %s: %w", shards[last].Label(), err)
		}
		if res.Remove, err = movement(shards, shrunk, locs, next, keys); err != nil {
			return res, nil, err
		}
		res.Remove.Shard = shards[last].Label()
		res.Remove.IdealPct = 100 * float64(shards[last].Weight) / float64(l.TotalWeight())
	}

	return res, base, nil
}
