package e2e

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shardis/shardis/bench"
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
	verbs   []string // the commands of the pipeline being checked
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

	for _, cl := range callers {
		res.Ops += cl.ops
		res.Errors += cl.errs
		if cl.first != nil && res.FirstError == "" {
			res.FirstError = cl.first.Error()
		}
	}
	res.Commands = res.Ops * int64(c.Commands())
	res.Seconds = elapsed.Seconds()
	if res.Seconds > 0 {
		res.OpsPerSec = float64(res.Ops) / res.Seconds
		res.CommandsPerSec = float64(res.Commands) / res.Seconds
	}
	res.P50Micros, res.P99Micros = latencies(callers)
	res.Partial = ctx.Err() != nil
	progress(1)
	return res
}

// warmUp is the unmeasured time before a case of duration d: a tenth of
// it, at most a second.
func warmUp(d time.Duration) time.Duration { return min(d/10, time.Second) }

// latencies returns the median and the 99th percentile (nearest rank),
// in microseconds, of the operations the callers timed, from the samples
// they kept. A caller that timed more operations than it kept a sample of
// stands for more operations with each sample: every sample weighs the
// operations it was drawn from over the samples kept, so that the figures
// are those of all operations, not an average over callers whatever
// their pace.
func latencies(callers []*caller) (p50, p99 float64) {
	type weighted struct {
		ns     int64
		weight float64
	}
	var samples []weighted
	var total float64
	for _, cl := range callers {
		if len(cl.samples) == 0 {
			continue
		}
		w := float64(max(cl.seen, int64(len(cl.samples)))) / float64(len(cl.samples))
		for _, ns := range cl.samples {
			samples = append(samples, weighted{ns, w})
		}
		total += w * float64(len(cl.samples))
	}
	if len(samples) == 0 {
		return 0, 0
	}
	slices.SortFunc(samples, func(a, b weighted) int { return cmp.Compare(a.ns, b.ns) })
	at := func(p int) float64 {
		// The smallest sample whose operations, with every faster one's,
		// reach p% of all: ceil(len * p / 100) when no caller sampled.
		want, sum := total*float64(p)/100, 0.0
		for _, s := range samples {
			if sum += s.weight; sum >= want*(1-1e-12) {
				return float64(s.ns) / 1e3
			}
		}
		return float64(samples[len(samples)-1].ns) / 1e3
	}
	return at(50), at(99)
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
			r, err := cl.client.Do(ctx, "SET", cl.last, value)
			return checkReply("SET", cl.last, r, err)
		}
		k := cl.last // GET the key just written
		cl.last = ""
		r, err := cl.client.Do(ctx, "GET", k)
		return checkReply("GET", k, r, err)
	case Pipeline:
		// (Size+1)/2 keys, each SET then read back, the last GET left out
		// when Size is odd: Size commands in all.
		p := cl.client.Pipeline()
		keys := cl.take((cl.c.Size + 1) / 2)
		verbs := cl.verbs[:0]
		for _, k := range keys {
			p.Send("SET", k, value)
			verbs = append(verbs, "SET")
			if p.Len() < cl.c.Size {
				p.Send("GET", k)
				verbs = append(verbs, "GET")
			}
		}
		cl.verbs = verbs
		res, err := p.Exec(ctx)
		if err != nil {
			return err
		}
		if len(res) != len(verbs) {
			return fmt.Errorf("%w: %d results for a pipeline of %d commands", bench.ErrWorkload, len(res), len(verbs))
		}
		for i, r := range res {
			if err := checkReply(verbs[i], keys[i/2], r.Reply, r.Err); err != nil {
				return err
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
		if cl.c.Kind == MSet {
			r, err := cl.client.Do(ctx, "MSET", cl.args...)
			return checkReply("MSET", keys[0], r, err)
		}
		r, err := cl.client.Do(ctx, "MGET", cl.args...)
		if err != nil {
			return fmt.Errorf("%w: MGET: %w", bench.ErrWorkload, err)
		}
		vals, ok := r.([]any)
		if !ok || len(vals) != len(keys) {
			return fmt.Errorf("%w: MGET of %d keys: unexpected reply %T", bench.ErrWorkload, len(keys), r)
		}
		for i, v := range vals {
			if err := checkReply("GET", keys[i], v, nil); err != nil {
				return err
			}
		}
		return nil
	}
	return errors.New("shardis: unknown case kind " + string(cl.c.Kind))
}

// checkReply checks the reply to one command of the workload: no error,
// "OK" for SET and MSET, the value written for GET (a GET of an MGET too).
// A reply that is not what was written (a key that another client removed,
// a nil) makes the operation fail, so that it never counts as done.
func checkReply(verb, key string, reply any, err error) error {
	if err != nil {
		return fmt.Errorf("%w: %s %q: %w", bench.ErrWorkload, verb, key, err)
	}
	want := value
	if verb != "GET" {
		want = "OK"
	}
	switch r := reply.(type) {
	case string:
		if r == want {
			return nil
		}
	case []byte:
		if string(r) == want {
			return nil
		}
	}
	if reply == nil {
		return fmt.Errorf("%w: %s %q: no value", bench.ErrWorkload, verb, key)
	}
	return fmt.Errorf("%w: %s %q: unexpected reply of type %T", bench.ErrWorkload, verb, key, reply)
}
