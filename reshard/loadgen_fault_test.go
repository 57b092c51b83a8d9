package reshard_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// faultLoadEnv holds a faultSpec when the test binary runs as a load
// generator that tolerates failures of one shard (see TestMain).
const faultLoadEnv = "SHARDIS_RESHARD_FAULTLOAD"

// faultSpec tells a fault-tolerant load generator what to do. It runs the
// same mix as runLoad, but an operation may fail: what it may have done is
// then kept as a range (counters, list lengths) or a set of possible values
// (strings), and every later reply must fall inside it.
type faultSpec struct {
	From, To   string // URLs of the migration the client starts in
	Prefix     string
	Goroutines int
	PreKeys    int
	Ready      string
	Stop       string
	Failed     string // file created once the process met failedMark failures
	// Dead is the address of the shard the test kills: a failure is
	// allowed only on a key that this shard owns in either topology,
	// with an error that names it.
	Dead string
	// Rollback: once Abort exists the client calls AbortMigration and
	// creates Aborted; once Finish exists and the reverse migration is
	// armed it calls FinishMigration and creates Finished.
	Abort, Aborted, Finish, Finished string
}

// failedMark is how many failures a process meets before it tells the
// test so (faultSpec.Failed): the load runs for a while with a shard down.
const failedMark = 1000

// span is what a counter (or a list's length) may be: Lo counts the
// acknowledged increments, Hi adds those whose outcome is unknown.
type span struct{ Lo, Hi int64 }

// absent stands for a key that does not exist among possible values.
const absent = "\x00absent"

// ttlState is a key written with SET ... EX 60: its possible values and
// when the last write that may have been applied was acknowledged or sent.
type ttlState struct {
	Vals   []string
	Lo, Hi int64 // unix ms: the oldest and newest possible SET
	// Log holds the key's last writes (value, time, outcome), printed
	// when its end value is not one of Vals.
	Log []string
}

// logWrite appends one write of v to the key's log, keeping the last 8.
func (ts *ttlState) logWrite(v int, outcome string) {
	ts.Log = append(ts.Log, fmt.Sprintf("%d at %d: %s", v, time.Now().UnixMilli(), outcome))
	if len(ts.Log) > 8 {
		ts.Log = ts.Log[len(ts.Log)-8:]
	}
}

// failure is one failed operation as the test checks it.
type failure struct {
	Op    string
	Keys  []string
	Kind  string   // "node", "migrate", or "other"
	Nodes []string // addresses the error names
	Err   string
	At    int64 // unix ms
}

// faultResult is what a fault-tolerant load generator saw.
type faultResult struct {
	Ops      int64
	Failures int64
	// NotApplied counts failures whose command was certainly not sent
	// (a *shard.MigrateError without Sent, a node marked down, a refused
	// dial);
	// Unknown the others, whose effect is kept as a range.
	NotApplied, Unknown int64
	// Bad counts failures on keys the dead shard owns in neither
	// topology, or with an error that is not a node's (or that names
	// another node); Wrong counts replies outside what was possible.
	Bad, Wrong          int64
	Samples             []failure // the bad ones and wrong values first
	FirstFail, LastFail int64     // unix ms
	// OKByTick counts successful operations per 100 ms (unix ms / 100).
	OKByTick map[int64]int64
	Control  []string // errors of AbortMigration/FinishMigration

	Counters map[string]span
	Hashes   map[string]map[string]span
	Lists    map[string]span
	Strings  map[string][]string
	TTLs     map[string]ttlState
}

func newFaultResult() *faultResult {
	return &faultResult{OKByTick: map[int64]int64{}, Counters: map[string]span{}, Hashes: map[string]map[string]span{}, Lists: map[string]span{},
		Strings: map[string][]string{}, TTLs: map[string]ttlState{}}
}

func (r *faultResult) merge(o *faultResult) {
	r.Ops += o.Ops
	r.Failures += o.Failures
	r.NotApplied += o.NotApplied
	r.Unknown += o.Unknown
	r.Bad += o.Bad
	r.Wrong += o.Wrong
	r.Samples = append(r.Samples, o.Samples...)
	if o.FirstFail > 0 && (r.FirstFail == 0 || o.FirstFail < r.FirstFail) {
		r.FirstFail = o.FirstFail
	}
	r.LastFail = max(r.LastFail, o.LastFail)
	r.Control = append(r.Control, o.Control...)
	for k, v := range o.OKByTick {
		r.OKByTick[k] += v
	}
	maps.Copy(r.Counters, o.Counters)
	maps.Copy(r.Hashes, o.Hashes)
	maps.Copy(r.Lists, o.Lists)
	maps.Copy(r.Strings, o.Strings)
	maps.Copy(r.TTLs, o.TTLs)
}

// ringOwner places keys by package ring (not by the client under test).
type ringOwner struct{ r *ring.Ring }

func newRingOwner(u string) (ringOwner, error) {
	cfg, err := shard.ParseURL(u)
	if err != nil {
		return ringOwner{}, err
	}
	r, err := ring.New(cfg.RingConfig())
	return ringOwner{r}, err
}

func (o ringOwner) addr(key string) string { return o.r.Shards()[o.r.Locate(key)].Addr }

// runFaultLoad is the fault-tolerant load generator's main.
func runFaultLoad(raw string) int {
	var spec faultSpec
	fail := func(err error) int { fmt.Fprintln(os.Stderr, "faultload:", err); return 2 }
	if err := json.Unmarshal([]byte(raw), &spec); err != nil {
		return fail(err)
	}
	to, err := shard.ParseURL(spec.To)
	if err != nil {
		return fail(err)
	}
	from, err := shard.ParseURL(spec.From)
	if err != nil {
		return fail(err)
	}
	var judge *faultJudge
	if spec.Dead != "" {
		judge = &faultJudge{dead: spec.Dead}
		if judge.from, err = newRingOwner(spec.From); err != nil {
			return fail(err)
		}
		if judge.to, err = newRingOwner(spec.To); err != nil {
			return fail(err)
		}
	}
	to.Migration = &shard.Migration{From: &from}
	to.Pool.ClientName = shard.AutoClientName
	ctx := context.Background()
	c, err := shard.New(ctx, to)
	if err != nil {
		return fail(err)
	}
	defer c.Close()
	results := make([]*faultResult, spec.Goroutines)
	var ready, wg sync.WaitGroup
	var failures atomic.Int64
	failed := func() {
		if failures.Add(1) == failedMark {
			_ = os.WriteFile(spec.Failed, nil, 0o600)
		}
	}
	ready.Add(spec.Goroutines)
	for g := range results {
		results[g] = newFaultResult()
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := &faultWorker{c: c, r: results[g], judge: judge, p: fmt.Sprintf("%s:%d:", spec.Prefix, g), failedOnce: failed}
			w.run(ctx, spec, ready.Done)
		}()
	}
	control := rollbackControl(ctx, c, spec)
	ready.Wait()
	if err := os.WriteFile(spec.Ready, nil, 0o600); err != nil {
		return fail(err)
	}
	wg.Wait()
	all := newFaultResult()
	for _, r := range results {
		all.merge(r)
	}
	all.Control = append(all.Control, control()...)
	if err := json.NewEncoder(os.Stdout).Encode(all); err != nil {
		return fail(err)
	}
	return 0
}

// rollbackControl follows the rollback protocol when the test asks for
// it (spec.Abort, spec.Finish) until spec.Stop exists; the returned
// function waits for it to end and returns its errors.
func rollbackControl(ctx context.Context, c *shard.Client, spec faultSpec) func() []string {
	if spec.Abort == "" {
		return func() []string { return nil }
	}
	var errs []string
	done := make(chan struct{})
	exists := func(f string) bool { _, err := os.Stat(f); return err == nil }
	go func() {
		defer close(done)
		aborted, finished := false, false
		for !exists(spec.Stop) && !finished {
			switch {
			case !aborted && exists(spec.Abort):
				if err := c.AbortMigration(ctx); err != nil {
					errs = append(errs, "AbortMigration: "+err.Error())
					return
				}
				aborted = true
				if err := os.WriteFile(spec.Aborted, nil, 0o600); err != nil {
					errs = append(errs, err.Error())
					return
				}
			case aborted && exists(spec.Finish):
				if info, ok := c.Migration(); !ok || info.Phase != shard.PhaseArmed {
					break // the reverse fence is not armed here yet
				}
				if err := c.FinishMigration(); err != nil {
					errs = append(errs, "FinishMigration: "+err.Error())
					return
				}
				finished = true
				if err := os.WriteFile(spec.Finished, nil, 0o600); err != nil {
					errs = append(errs, err.Error())
					return
				}
			}
			time.Sleep(10 * time.Millisecond) // polling files the test creates
		}
	}()
	return func() []string { <-done; return errs }
}

// faultJudge tells whether a failure is one the dead shard explains.
type faultJudge struct {
	dead     string
	from, to ringOwner
}

// faultWorker is one goroutine of the fault-tolerant load generator.
type faultWorker struct {
	c     *shard.Client
	r     *faultResult
	judge *faultJudge
	p     string // key prefix
	// failedOnce counts a failure of the process (faultSpec.Failed).
	failedOnce func()
}

// ok counts a successful operation in its 100 ms tick.
func (w *faultWorker) ok() { w.r.OKByTick[time.Now().UnixMilli()/100]++ }

// classify reads a failure's error: its kind, the nodes it names, and
// whether the command was certainly not applied.
func classify(err error) (kind string, nodes []string, notApplied bool) {
	var me *shard.MigrateError
	var ne *shard.NodeError
	var de *pool.DialError
	if errors.As(err, &ne) {
		nodes = append(nodes, ne.Node.Addr)
	}
	switch {
	case errors.As(err, &me):
		// The command was not sent (its key could not be moved), unless
		// it was a blind overwrite written at the new owner whose old
		// copy could not be deleted (Sent): then it may have taken effect.
		return "migrate", append(nodes, me.From.Addr, me.To.Addr), !me.Sent
	case ne != nil:
		return "node", nodes, errors.Is(err, shard.ErrNodeDown) || errors.As(err, &de)
	}
	return "other", nil, false
}

// failed records a failed operation on keys and reports whether its
// effect may have been applied.
func (w *faultWorker) failed(op string, keys []string, err error) (maybeApplied bool) {
	r := w.r
	r.Failures++
	if w.failedOnce != nil {
		w.failedOnce()
	}
	now := time.Now().UnixMilli()
	if r.FirstFail == 0 {
		r.FirstFail = now
	}
	r.LastFail = now
	kind, nodes, notApplied := classify(err)
	if notApplied {
		r.NotApplied++
	} else {
		r.Unknown++
	}
	bad := w.judge == nil || kind == "other" || !slices.Contains(nodes, w.judge.dead)
	if !bad {
		touches := false
		for _, k := range keys {
			touches = touches || w.judge.from.addr(k) == w.judge.dead || w.judge.to.addr(k) == w.judge.dead
		}
		bad = !touches
	}
	f := failure{Op: op, Keys: keys, Kind: kind, Nodes: nodes, Err: err.Error(), At: now}
	if bad {
		r.Bad++
		if len(r.Samples) < 20 {
			r.Samples = append(r.Samples, f)
		}
	} else if len(r.Samples) < 3 {
		r.Samples = append(r.Samples, f)
	}
	return !notApplied
}

// wrong records a reply outside what was possible.
func (w *faultWorker) wrong(op string, keys []string, format string, args ...any) {
	w.r.Wrong++
	if len(w.r.Samples) < 20 {
		w.r.Samples = append(w.r.Samples, failure{Op: op, Keys: keys, Kind: "wrong value",
			Err: fmt.Sprintf(format, args...), At: time.Now().UnixMilli()})
	}
}

// count runs an increment (INCR, HINCRBY, LPUSH: a reply that is the new
// value) on a span and checks the reply against it.
func (w *faultWorker) count(op string, key string, s span, reply any, err error) span {
	w.r.Ops++
	if err != nil {
		if w.failed(op, []string{key}, err) {
			s.Hi++
		}
		return s
	}
	n, err := redis.Int64(reply, nil)
	if err != nil || n < s.Lo+1 || n > s.Hi+1 {
		w.wrong(op, []string{key}, "got %v (%v), want %d..%d", reply, err, s.Lo+1, s.Hi+1)
		return span{s.Lo + 1, s.Hi + 1}
	}
	w.ok()
	return span{n, n}
}

func (w *faultWorker) counter(key string, start int64) span {
	if s, ok := w.r.Counters[key]; ok {
		return s
	}
	return span{start, start}
}

// wrote records a write of value v to a string key: acknowledged (err
// nil), certainly not applied, or unknown.
func (w *faultWorker) wrote(op string, key, v string, err error) {
	switch {
	case err == nil:
		w.r.Strings[key] = []string{v}
	case w.failed(op, []string{key}, err):
		w.maybe(key, v)
	}
}

// maybe adds v to the possible values of a string key, after a write
// whose outcome is unknown.
func (w *faultWorker) maybe(key, v string) {
	vals := w.r.Strings[key]
	if vals == nil {
		vals = []string{absent}
	}
	if !slices.Contains(vals, v) {
		vals = append(vals, v)
	}
	w.r.Strings[key] = vals
}

// read checks a value read from a string key and, being acknowledged,
// makes it the only possible one.
func (w *faultWorker) read(op string, key string, got any) {
	v := absent
	if got != nil {
		s, err := redis.String(got, nil)
		if err != nil {
			w.wrong(op, []string{key}, "reply %v: %v", got, err)
			return
		}
		v = s
	}
	vals := w.r.Strings[key]
	if vals == nil {
		vals = []string{absent}
	}
	if !slices.Contains(vals, v) {
		w.wrong(op, []string{key}, "read %q, possible %q", v, vals)
	} else {
		w.ok()
	}
	w.r.Strings[key] = []string{v}
}

func (w *faultWorker) run(ctx context.Context, spec faultSpec, ready func()) {
	r, p, c := w.r, w.p, w.c
	readyDone := false
	for i := 0; ; i++ {
		if i%25 == 0 {
			if _, err := os.Stat(spec.Stop); err == nil {
				break
			}
			if i == 50 && !readyDone {
				ready()
				readyDone = true
			}
		}
		for _, k := range []struct {
			key   string
			start int64
		}{{fmt.Sprintf("%sc:%d", p, i%20), 0}, {fmt.Sprintf("pre:%s%d", p, i%max(spec.PreKeys, 1)), 1000}} {
			if k.start == 1000 && spec.PreKeys == 0 {
				continue
			}
			reply, err := c.Do(ctx, "INCR", k.key)
			r.Counters[k.key] = w.count("INCR", k.key, w.counter(k.key, k.start), reply, err)
		}

		hkey, field := p+"h", "f"+strconv.Itoa(i%10)
		if r.Hashes[hkey] == nil {
			r.Hashes[hkey] = map[string]span{}
		}
		reply, err := c.Do(ctx, "HINCRBY", hkey, field, 1)
		r.Hashes[hkey][field] = w.count("HINCRBY", hkey, r.Hashes[hkey][field], reply, err)

		lkey := p + "l"
		reply, err = c.Do(ctx, "LPUSH", lkey, i)
		r.Lists[lkey] = w.count("LPUSH", lkey, r.Lists[lkey], reply, err)

		tkey := fmt.Sprintf("%st:%d", p, i%10)
		r.Ops++
		sent := time.Now().UnixMilli()
		ts, tracked := r.TTLs[tkey]
		if !tracked {
			ts = ttlState{Vals: []string{absent}}
		}
		if _, err := c.Do(ctx, "SET", tkey, i, "EX", 60); err == nil {
			now := time.Now().UnixMilli()
			ts = ttlState{Vals: []string{strconv.Itoa(i)}, Lo: now, Hi: now, Log: ts.Log}
			ts.logWrite(i, "ok")
			w.ok()
		} else if w.failed("SET EX", []string{tkey}, err) {
			ts.Vals = append(ts.Vals, strconv.Itoa(i))
			if ts.Lo == 0 {
				ts.Lo = sent
			}
			ts.Hi = time.Now().UnixMilli()
			ts.logWrite(i, "unknown: "+err.Error())
		} else {
			ts.logWrite(i, "not applied: "+err.Error())
		}
		r.TTLs[tkey] = ts

		// A pipeline: write, read back, count.
		skey, pkey := fmt.Sprintf("%ss:%d", p, i%10), fmt.Sprintf("%spc:%d", p, i%5)
		v := "v" + strconv.Itoa(i)
		pl := c.Pipeline()
		pl.Send("SET", skey, v)
		pl.Send("GET", skey)
		pl.Send("INCR", pkey)
		res, err := pl.Exec(ctx)
		switch {
		case err != nil:
			r.Ops++
			if w.failed("pipeline", []string{skey, pkey}, err) {
				w.maybe(skey, v)
				s := w.counter(pkey, 0)
				r.Counters[pkey] = span{s.Lo, s.Hi + 1}
			}
		case len(res) != 3:
			w.wrong("pipeline", []string{skey, pkey}, "%d results", len(res))
		default:
			r.Ops += 3
			w.wrote("pipeline SET", skey, v, res[0].Err)
			if res[1].Err != nil {
				w.failed("pipeline GET", []string{skey}, res[1].Err)
			} else {
				w.read("pipeline GET", skey, res[1].Reply)
			}
			r.Counters[pkey] = w.count("pipeline INCR", pkey, w.counter(pkey, 0), res[2].Reply, res[2].Err)
		}

		if i%3 == 0 { // cross-shard MSET and MGET
			args := make([]any, 0, 10)
			keys := make([]any, 0, 5)
			names := make([]string, 0, 5)
			for j := 0; j < 5; j++ {
				k := fmt.Sprintf("%sm:%d", p, j)
				args = append(args, k, i)
				keys = append(keys, k)
				names = append(names, k)
			}
			r.Ops += 2
			if _, err := c.Do(ctx, "MSET", args...); err != nil {
				// Split over shards: the parts that other shards took were
				// applied, whatever the failed part's error says.
				w.failed("MSET", names, err)
				for _, k := range names {
					w.maybe(k, strconv.Itoa(i))
				}
			} else {
				for _, k := range names {
					r.Strings[k] = []string{strconv.Itoa(i)}
				}
			}
			vals, err := redis.Values(c.Do(ctx, "MGET", keys...))
			switch {
			case err != nil:
				w.failed("MGET", names, err)
			case len(vals) != len(names):
				w.wrong("MGET", names, "%d values", len(vals))
			default:
				for j, k := range names {
					w.read("MGET", k, vals[j])
				}
			}
		}
		if i%5 == 0 {
			dkey := fmt.Sprintf("%sd:%d", p, i%7)
			r.Ops += 2
			_, setErr := c.Do(ctx, "SET", dkey, 1)
			if setErr != nil {
				w.failed("SET", []string{dkey}, setErr)
			}
			reply, err := c.Do(ctx, "DEL", dkey)
			switch n, _ := redis.Int64(reply, nil); {
			case err != nil:
				w.failed("DEL", []string{dkey}, err)
			case setErr == nil && n != 1, n != 0 && n != 1:
				w.wrong("DEL", []string{dkey}, "deleted %d after SET (%v)", n, setErr)
			}
		}
	}
	if !readyDone {
		ready()
	}
}
