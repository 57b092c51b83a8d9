package reshard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/shard"
)

// The test binary runs itself as a load generator (a separate client
// process) when loadEnv holds a loadSpec: see TestMain. (The mover that
// tests kill is the shardis CLI: cli_test.go.)
const loadEnv = "SHARDIS_RESHARD_LOADGEN"

// loadSpec tells a load generator what to do.
type loadSpec struct {
	From, To   string // URLs
	Prefix     string // of every key it writes
	Goroutines int
	PreKeys    int    // pre:<prefix>:<g>:<k> counters the test wrote before, each 1000
	Ready      string // file created once every goroutine has done some work
	Stop       string // file whose existence stops the load
	// Live builds the client on From alone and moves it to To at run time
	// (StartMigration) under its own load, before creating Ready.
	Live bool
}

// loadResult is what a load generator acknowledged, for the test to check.
type loadResult struct {
	Ops      int64
	Failures int64
	Errors   []string
	Counters map[string]int64 // key -> value after the last acknowledged INCR
	Hashes   map[string]map[string]int64
	Lists    map[string]int64 // key -> length after the last LPUSH
	TTLs     map[string]int64 // key -> unix ms when SET ... EX 60 was acknowledged
	Strings  map[string]string
}

func (r *loadResult) merge(o *loadResult) {
	r.Ops += o.Ops
	r.Failures += o.Failures
	r.Errors = append(r.Errors, o.Errors...)
	maps.Copy(r.Counters, o.Counters)
	maps.Copy(r.Hashes, o.Hashes)
	maps.Copy(r.Lists, o.Lists)
	maps.Copy(r.TTLs, o.TTLs)
	maps.Copy(r.Strings, o.Strings)
}

func newLoadResult() *loadResult {
	return &loadResult{Counters: map[string]int64{}, Hashes: map[string]map[string]int64{}, Lists: map[string]int64{},
		TTLs: map[string]int64{}, Strings: map[string]string{}}
}

// runLoad is the load generator's main: Goroutines workers of single
// commands, pipelines, cross-shard MSET/MGET, INCR, HINCRBY, LPUSH, SET
// with TTL and DEL, each on keys of its own so that every reply can be
// checked against what the worker acknowledged before.
func runLoad(raw string) int {
	var spec loadSpec
	if err := json.Unmarshal([]byte(raw), &spec); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		return 2
	}
	to, err := shard.ParseURL(spec.To)
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		return 2
	}
	from, err := shard.ParseURL(spec.From)
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		return 2
	}
	cfg := to
	if spec.Live {
		cfg = from
	} else {
		cfg.Migration = &shard.Migration{From: &from}
	}
	cfg.Pool.ClientName = shard.AutoClientName
	ctx := context.Background()
	c, err := shard.New(ctx, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		return 2
	}
	defer c.Close()
	results := make([]*loadResult, spec.Goroutines)
	var ready, wg sync.WaitGroup
	ready.Add(spec.Goroutines)
	for g := range results {
		results[g] = newLoadResult()
		wg.Add(1)
		go func() {
			defer wg.Done()
			worker(ctx, c, spec, g, results[g], ready.Done)
		}()
	}
	ready.Wait()
	if spec.Live {
		if err := c.StartMigration(ctx, to); err != nil {
			fmt.Fprintln(os.Stderr, "loadgen: StartMigration:", err)
			return 2
		}
	}
	if err := os.WriteFile(spec.Ready, nil, 0o600); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		return 2
	}
	wg.Wait()
	all := newLoadResult()
	for _, r := range results {
		all.merge(r)
	}
	if err := json.NewEncoder(os.Stdout).Encode(all); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		return 2
	}
	return 0
}

func worker(ctx context.Context, c *shard.Client, spec loadSpec, g int, r *loadResult, ready func()) {
	p := fmt.Sprintf("%s:%d:", spec.Prefix, g)
	fail := func(op string, err error) {
		r.Failures++
		if len(r.Errors) < 5 {
			r.Errors = append(r.Errors, fmt.Sprintf("%s%s: %v", p, op, err))
		}
	}
	expectInt := func(op string, reply any, err error, want int64) bool {
		r.Ops++
		if err != nil {
			fail(op, err)
			return false
		}
		got, err := redis.Int64(reply, nil)
		if err != nil || got != want {
			fail(op, fmt.Errorf("got %v, want %d", reply, want))
			return false
		}
		return true
	}
	incr := func(key string, start int64) {
		prev, ok := r.Counters[key]
		if !ok {
			prev = start
		}
		reply, err := c.Do(ctx, "INCR", key)
		if expectInt("INCR "+key, reply, err, prev+1) {
			r.Counters[key] = prev + 1
		}
	}
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
		incr(fmt.Sprintf("%sc:%d", p, i%20), 0)
		if spec.PreKeys > 0 {
			incr(fmt.Sprintf("pre:%s%d", p, i%spec.PreKeys), 1000)
		}
		hkey, field := p+"h", "f"+strconv.Itoa(i%10)
		if r.Hashes[hkey] == nil {
			r.Hashes[hkey] = map[string]int64{}
		}
		reply, err := c.Do(ctx, "HINCRBY", hkey, field, 1)
		if expectInt("HINCRBY", reply, err, r.Hashes[hkey][field]+1) {
			r.Hashes[hkey][field]++
		}
		lkey := p + "l"
		reply, err = c.Do(ctx, "LPUSH", lkey, i)
		if expectInt("LPUSH", reply, err, r.Lists[lkey]+1) {
			r.Lists[lkey]++
		}
		tkey := fmt.Sprintf("%st:%d", p, i%10)
		r.Ops++
		if _, err := c.Do(ctx, "SET", tkey, i, "EX", 60); err != nil {
			fail("SET EX", err)
		} else {
			r.TTLs[tkey] = time.Now().UnixMilli()
		}
		// A pipeline: write, read back, count.
		skey, pkey := fmt.Sprintf("%ss:%d", p, i%10), fmt.Sprintf("%spc:%d", p, i%5)
		pl := c.Pipeline()
		pl.Send("SET", skey, "v"+strconv.Itoa(i))
		pl.Send("GET", skey)
		pl.Send("INCR", pkey)
		res, err := pl.Exec(ctx)
		r.Ops += 3
		switch {
		case err != nil:
			fail("pipeline", err)
		case len(res) != 3:
			fail("pipeline", fmt.Errorf("%d results", len(res)))
		default:
			if res[0].Err != nil || res[1].Err != nil {
				fail("pipeline SET/GET", fmt.Errorf("%v %v", res[0].Err, res[1].Err))
			} else if v, _ := redis.String(res[1].Reply, nil); v != "v"+strconv.Itoa(i) {
				fail("pipeline GET", fmt.Errorf("read %q after writing v%d", v, i))
			} else {
				r.Strings[skey] = v
			}
			if res[2].Err != nil {
				fail("pipeline INCR", res[2].Err)
			} else if n, _ := redis.Int64(res[2].Reply, nil); n != r.Counters[pkey]+1 {
				fail("pipeline INCR", fmt.Errorf("got %d, want %d", n, r.Counters[pkey]+1))
			} else {
				r.Counters[pkey] = n
			}
		}
		if i%3 == 0 { // cross-shard MSET and MGET
			args := make([]any, 0, 10)
			keys := make([]any, 0, 5)
			for j := 0; j < 5; j++ {
				k := fmt.Sprintf("%sm:%d", p, j)
				args = append(args, k, i)
				keys = append(keys, k)
			}
			r.Ops += 2
			if _, err := c.Do(ctx, "MSET", args...); err != nil {
				fail("MSET", err)
			} else if vals, err := redis.Int64s(c.Do(ctx, "MGET", keys...)); err != nil || len(vals) != 5 {
				fail("MGET", fmt.Errorf("%v %v", vals, err))
			} else {
				for j, v := range vals {
					if v != int64(i) {
						fail("MGET", fmt.Errorf("key %d read %d after MSET %d", j, v, i))
						break
					}
				}
				for j := range keys {
					r.Strings[keys[j].(string)] = strconv.Itoa(i)
				}
			}
		}
		if i%5 == 0 {
			dkey := fmt.Sprintf("%sd:%d", p, i%7)
			r.Ops++
			if _, err := c.Do(ctx, "SET", dkey, 1); err != nil {
				fail("SET", err)
			} else {
				reply, err := c.Do(ctx, "DEL", dkey)
				expectInt("DEL", reply, err, 1)
			}
		}
	}
	if !readyDone {
		ready()
	}
}
