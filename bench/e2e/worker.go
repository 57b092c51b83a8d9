package e2e

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shardis/shardis/shard"
)

// maxSamples bounds the latencies kept per case, over all callers; past it
// each caller keeps a uniform sample (reservoir sampling).
const maxSamples = 1 << 20

// caller is one goroutine of a case.
type caller struct {
	client  *shard.Client
	c       Case
	keys    []string
	next    int    // index of the next key
	last    string // the key a Single case SET and GETs next
	samples []int64
	seen    int64 // operations timed, kept or not
	limit   int
	rng     *rand.Rand
	ops     int64
	errs    int64
	first   error
	args    []any
}

// runCase runs c on client for a warm-up (see warmUp), then for d, and
// returns its figures.
func runCase(ctx context.Context, client *shard.Client, target string, c Case, keys []string, d time.Duration,
	progress func(float64)) Result {
	res := Result{Target: target, Case: c}
	progress(0)
	if warm := warmUp(d); warm > 0 {
		runCallers(ctx, client, c, keys, warm, nil)
	}
	if ctx.Err() != nil {
		res.Partial = true
		return res
	}
	start := time.Now()
	callers := runCallers(ctx, client, c, keys, d, progress)
	elapsed := time.Since(start)

	var samples []int64
	for _, cl := range callers {
		res.Ops += cl.ops
		res.Errors += cl.errs
		if cl.first != nil && res.FirstError == "" {
			res.FirstError = cl.first.Error()
		}
		samples = append(samples, cl.samples...)
	}
	res.Commands = res.Ops * int64(c.Commands())
	res.Seconds = elapsed.Seconds()
	if res.Seconds > 0 {
		res.OpsPerSec = float64(res.Ops) / res.Seconds
		res.CommandsPerSec = float64(res.Commands) / res.Seconds
	}
	slices.Sort(samples)
	res.P50Micros = percentile(samples, 50)
	res.P99Micros = percentile(samples, 99)
	res.Partial = ctx.Err() != nil
	progress(1)
	return res
}

// warmUp is the unmeasured time before a case of duration d: a tenth of
// it, at most a second.
func warmUp(d time.Duration) time.Duration { return min(d/10, time.Second) }

// percentile returns the p-th percentile (nearest rank) of sorted
// nanosecond samples, in microseconds; 0 without samples.
func percentile(sorted []int64, p int) float64 {
	if len(sorted) == 0 {
		return 0
	}
	rank := (len(sorted)*p + 99) / 100 // ceil(len * p / 100)
	return float64(sorted[max(rank, 1)-1]) / 1e3
}

// runCallers runs c.Callers goroutines for d (or until ctx ends) and
// returns them. progress, when not nil, is called about ten times.
func runCallers(ctx context.Context, client *shard.Client, c Case, keys []string, d time.Duration,
	progress func(float64)) []*caller {
	var stop atomic.Bool
	stopAfter := context.AfterFunc(ctx, func() { stop.Store(true) })
	defer stopAfter()
	timer := time.AfterFunc(d, func() { stop.Store(true) })
	defer timer.Stop()

	callers := make([]*caller, c.Callers)
	span := len(keys) / c.Callers
	var wg sync.WaitGroup
	for i := range callers {
		cl := &caller{
			client: client, c: c, keys: keys,
			next:  i * span, // callers start apart in the key space
			limit: max(maxSamples/c.Callers, 1),
			rng:   rand.New(rand.NewPCG(uint64(i), 0x5eed)),
		}
		callers[i] = cl
		wg.Go(func() {
			for !stop.Load() {
				cl.one(ctx)
			}
		})
	}
	if progress != nil {
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		start := time.Now()
		tick := time.NewTicker(max(d/10, time.Millisecond))
	loop:
		for {
			select {
			case <-done:
				break loop
			case <-tick.C:
				progress(min(float64(time.Since(start))/float64(d), 1))
			}
		}
		tick.Stop()
	}
	wg.Wait()
	return callers
}

// one runs and times one operation.
func (cl *caller) one(ctx context.Context) {
	start := time.Now()
	err := cl.do(ctx)
	took := time.Since(start).Nanoseconds()
	if ctx.Err() != nil {
		return // cut off by the interruption: neither a result nor an error
	}
	if err != nil {
		cl.errs++
		if cl.first == nil {
			cl.first = err
		}
		return
	}
	cl.ops++
	cl.seen++
	if len(cl.samples) < cl.limit {
		cl.samples = append(cl.samples, took)
	} else if j := cl.rng.Int64N(cl.seen); j < int64(cl.limit) {
		cl.samples[j] = took
	}
}

// take returns the next n keys, wrapping around the key space.
func (cl *caller) take(n int) []string {
	if cl.next+n > len(cl.keys) {
		cl.next = 0
	}
	out := cl.keys[cl.next : cl.next+n]
	cl.next += n
	return out
}

// do runs one operation of the case.
func (cl *caller) do(ctx context.Context) error {
	switch cl.c.Kind {
	case Single:
		if cl.last == "" {
			cl.last = cl.take(1)[0]
			_, err := cl.client.Do(ctx, "SET", cl.last, value)
			return err
		}
		k := cl.last // GET the key just written
		cl.last = ""
		_, err := cl.client.Do(ctx, "GET", k)
		return err
	case Pipeline:
		p := cl.client.Pipeline()
		for _, k := range cl.take(max(cl.c.Size/2, 1)) {
			p.Send("SET", k, value)
			if p.Len() < cl.c.Size {
				p.Send("GET", k)
			}
		}
		res, err := p.Exec(ctx)
		if err != nil {
			return err
		}
		for _, r := range res {
			if r.Err != nil {
				return r.Err
			}
		}
		return nil
	case MSet, MGet:
		// MGET reads the keys prefill wrote, always the first Size.
		keys := cl.keys[:cl.c.Size]
		if cl.c.Kind == MSet {
			keys = cl.take(cl.c.Size)
		}
		cl.args = cl.args[:0]
		for _, k := range keys {
			cl.args = append(cl.args, k)
			if cl.c.Kind == MSet {
				cl.args = append(cl.args, value)
			}
		}
		name := "MGET"
		if cl.c.Kind == MSet {
			name = "MSET"
		}
		_, err := cl.client.Do(ctx, name, cl.args...)
		return err
	}
	return errors.New("shardis: unknown case kind " + string(cl.c.Kind))
}
