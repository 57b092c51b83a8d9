package peers

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	goredis "github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// The steady workload: what a service that already holds its keys does.
// Every contestant starts from flushed servers, writes every key once
// unmeasured (creating a key costs the servers more than overwriting it),
// then is measured overwriting and reading them, one goroutine, in
// batches of steadyBatch, every reply converted to a string and compared
// with what was written.
const (
	steadyKeys  = 200_000
	steadyBatch = 100
)

// randomKeys returns n distinct 16-character keys of random hex digits
// (the same ones on every call), so that keys neither share prefixes
// nor come in an order that favours a hash.
func randomKeys(n int) []string {
	rng := rand.New(rand.NewPCG(16, 16))
	seen := make(map[string]bool, n)
	keys := make([]string, 0, n)
	for len(keys) < n {
		k := fmt.Sprintf("%016x", rng.Uint64())
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	return keys
}

// steadyClient is one contestant of the steady workload. Each function
// runs one batch over keys and checks every reply as a string.
type steadyClient struct {
	name string
	set  func(ctx context.Context, keys []string) error
	get  func(ctx context.Context, keys []string) error
	mget func(ctx context.Context, keys []string) error
}

// checkString checks one reply converted to a string.
func checkString(verb, key, got string, err error, want string) error {
	if err != nil {
		return fmt.Errorf("%s %q: %w", verb, key, err)
	}
	if got != want {
		return fmt.Errorf("%s %q: got %q, want %q", verb, key, got, want)
	}
	return nil
}

// shardisSteady drives shardis: one reused Pipeline per batch, MGET as
// one Do (split by the client), replies converted with redis.String(s).
func shardisSteady(name string, c *shard.Client) steadyClient {
	p := c.Pipeline()
	batch := func(verb, want string) func(context.Context, []string) error {
		return func(ctx context.Context, keys []string) error {
			for _, k := range keys {
				if verb == "SET" {
					p.Send("SET", k, value)
				} else {
					p.Send("GET", k)
				}
			}
			res, err := p.Exec(ctx)
			if err != nil {
				return err
			}
			if len(res) != len(keys) {
				return fmt.Errorf("%d results for %d commands", len(res), len(keys))
			}
			for i, r := range res {
				s, err := redis.String(r.Reply, r.Err)
				if err := checkString(verb, keys[i], s, err, want); err != nil {
					return err
				}
			}
			return nil
		}
	}
	return steadyClient{
		name: name,
		set:  batch("SET", "OK"),
		get:  batch("GET", value),
		mget: func(ctx context.Context, keys []string) error {
			args := make([]any, len(keys))
			for i, k := range keys {
				args[i] = k
			}
			vals, err := redis.Strings(c.Do(ctx, "MGET", args...))
			if err != nil {
				return err
			}
			if len(vals) != len(keys) {
				return fmt.Errorf("MGET: %d values for %d keys", len(vals), len(keys))
			}
			for i, v := range vals {
				if err := checkString("MGET", keys[i], v, nil, value); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

// floorSteady drives the redigo floor.
func floorSteady(f *Floor) steadyClient {
	return steadyClient{
		name: "redigo-floor",
		set:  func(ctx context.Context, keys []string) error { return f.Set(ctx, keys, value) },
		get:  func(ctx context.Context, keys []string) error { return f.Get(ctx, keys, value) },
		mget: func(ctx context.Context, keys []string) error { return f.MGet(ctx, keys, value) },
	}
}

// goRedisSteady drives a go-redis Ring or ClusterClient: Pipelined per
// batch; for MGET a pipeline of GETs, since neither client splits an MGET
// whose keys live on different servers or slots.
func goRedisSteady(name string, c goredis.UniversalClient) steadyClient {
	batch := func(verb, want string) func(context.Context, []string) error {
		return func(ctx context.Context, keys []string) error {
			cmds, err := c.Pipelined(ctx, func(p goredis.Pipeliner) error {
				for _, k := range keys {
					if verb == "SET" {
						p.Set(ctx, k, value, 0)
					} else {
						p.Get(ctx, k)
					}
				}
				return nil
			})
			if err != nil {
				return err
			}
			if len(cmds) != len(keys) {
				return fmt.Errorf("%d results for %d commands", len(cmds), len(keys))
			}
			for i, cmd := range cmds {
				var s string
				var err error
				switch c := cmd.(type) {
				case *goredis.StatusCmd:
					s, err = c.Result()
				case *goredis.StringCmd:
					s, err = c.Result()
				default:
					err = fmt.Errorf("unexpected command type %T", cmd)
				}
				if err := checkString(verb, keys[i], s, err, want); err != nil {
					return err
				}
			}
			return nil
		}
	}
	get := batch("GET", value)
	return steadyClient{name: name, set: batch("SET", "OK"), get: get, mget: get}
}

// rueidisSteady drives rueidis: DoMulti per batch, MGET with its MGet
// helper (one MGET per slot in one DoMulti).
func rueidisSteady(c rueidis.Client) steadyClient {
	cmds := make(rueidis.Commands, 0, steadyBatch)
	batch := func(verb, want string) func(context.Context, []string) error {
		return func(ctx context.Context, keys []string) error {
			cmds = cmds[:0]
			for _, k := range keys {
				if verb == "SET" {
					cmds = append(cmds, c.B().Set().Key(k).Value(value).Build())
				} else {
					cmds = append(cmds, c.B().Get().Key(k).Build())
				}
			}
			res := c.DoMulti(ctx, cmds...)
			if len(res) != len(keys) {
				return fmt.Errorf("%d results for %d commands", len(res), len(keys))
			}
			for i, r := range res {
				s, err := r.ToString()
				if err := checkString(verb, keys[i], s, err, want); err != nil {
					return err
				}
			}
			return nil
		}
	}
	return steadyClient{
		name: "rueidis",
		set:  batch("SET", "OK"),
		get:  batch("GET", value),
		mget: func(ctx context.Context, keys []string) error {
			vals, err := rueidis.MGet(c, ctx, keys)
			if err != nil {
				return err
			}
			if len(vals) != len(keys) {
				return fmt.Errorf("MGet: %d values for %d keys", len(vals), len(keys))
			}
			for _, k := range keys {
				m := vals[k]
				s, err := m.ToString()
				if err := checkString("MGET", k, s, err, value); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

// runSteady runs every contestant in turn: flush the servers and measure
// SETs that create keys (CREATE, on keys of their own), flush again,
// write every key once unmeasured, then measure SET (overwrites), GET and
// MGET of steadyBatch keys, each as a sub-benchmark in which one op is
// one command (one key for MGET). server names the server processes whose
// CPU is reported. flush must return only once every server, replicas
// included, has applied it (see flushCluster), and settle, when not nil,
// is called after the unmeasured writes and returns once the replicas
// have applied them: no measured window holds a replica's share of
// earlier work.
func runSteady(b *testing.B, server string, flush, settle func() error, keys []string, clients []steadyClient) {
	ctx := context.Background()
	fresh := freshKeys(keys)
	for _, sc := range clients {
		b.Run(sc.name, func(b *testing.B) {
			if err := flush(); err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("CREATE%d", steadyBatch), func(b *testing.B) {
				b.ReportAllocs()
				pos := 0
				m := startMeterFor(server)
				for b.Loop() {
					if pos+steadyBatch > len(fresh) {
						pos = 0 // beyond 600,000 keys: overwrites
					}
					if err := sc.set(ctx, fresh[pos:pos+steadyBatch]); err != nil {
						b.Fatal(err)
					}
					pos += steadyBatch
				}
				m.report(b, steadyBatch)
			})
			if err := flush(); err != nil {
				b.Fatal(err)
			}
			for start := 0; start < len(keys); start += steadyBatch {
				if err := sc.set(ctx, keys[start:min(start+steadyBatch, len(keys))]); err != nil {
					b.Fatalf("creating the keys: %v", err)
				}
			}
			if settle != nil {
				if err := settle(); err != nil {
					b.Fatal(err)
				}
			}
			for _, op := range []struct {
				name string
				fn   func(context.Context, []string) error
			}{{"SET", sc.set}, {"GET", sc.get}, {"MGET", sc.mget}} {
				b.Run(fmt.Sprintf("%s%d", op.name, steadyBatch), func(b *testing.B) {
					b.ReportAllocs()
					pos := 0
					m := startMeterFor(server)
					for b.Loop() {
						if pos+steadyBatch > len(keys) {
							pos = 0
						}
						if err := op.fn(ctx, keys[pos:pos+steadyBatch]); err != nil {
							b.Fatal(err)
						}
						pos += steadyBatch
					}
					m.report(b, steadyBatch)
				})
			}
		})
	}
}

// freshKeys returns three generations of keys ("g1:" + key, ...): the
// keys that CREATE writes for the first time.
func freshKeys(keys []string) []string {
	out := make([]string, 0, 3*len(keys))
	for g := 1; g <= 3; g++ {
		for _, k := range keys {
			out = append(out, fmt.Sprintf("g%d:%s", g, k))
		}
	}
	return out
}

// flushAll returns a function that sends FLUSHALL to every server.
func flushAll(servers []*redistest.Server) func() error {
	return func() error {
		for _, s := range servers {
			if _, err := s.Do("FLUSHALL"); err != nil {
				return err
			}
		}
		return nil
	}
}

// flushCluster returns a function that sends FLUSHALL to every master of
// cl and then waits until every replica has applied it and everything
// before it (see replicasCaughtUp): a replica applies the flush of its
// master's keys after the master answers, which would otherwise fall
// inside the next measured window.
func flushCluster(cl *redistest.Cluster) func() error {
	return func() error {
		masters := cl.Masters()
		if err := flushAll(masters)(); err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		return replicasCaughtUp(ctx, cl, masters)
	}
}

// settleCluster returns a function that waits until every replica of cl
// has applied what its master holds (see replicasCaughtUp).
func settleCluster(cl *redistest.Cluster) func() error {
	return func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		return replicasCaughtUp(ctx, cl, cl.Masters())
	}
}

// replicasCaughtUp waits until every replica of masters has processed its
// master's replication stream up to the master's offset when the call
// began, and holds as many keys as its master.
func replicasCaughtUp(ctx context.Context, cl *redistest.Cluster, masters []*redistest.Server) error {
	for _, m := range masters {
		info, err := m.DoContext(ctx, "INFO", "replication")
		if err != nil {
			return err
		}
		want, err := infoInt(info, "master_repl_offset")
		if err != nil {
			return fmt.Errorf("%s: %w", m.Addr, err)
		}
		r, err := cl.ReplicaOf(m)
		if err != nil {
			return err
		}
		tick := time.NewTicker(5 * time.Millisecond)
		for {
			got, err := replicaOffset(ctx, r)
			if err == nil && got >= want {
				mk, merr := m.DoContext(ctx, "DBSIZE")
				rk, rerr := r.DoContext(ctx, "DBSIZE")
				if merr == nil && rerr == nil && mk == rk {
					break
				}
			}
			select {
			case <-ctx.Done():
				tick.Stop()
				return fmt.Errorf("replica %s of %s not caught up: %w", r.Addr, m.Addr, ctx.Err())
			case <-tick.C:
			}
		}
		tick.Stop()
	}
	return nil
}

// replicaOffset returns the replication offset that replica r processed.
func replicaOffset(ctx context.Context, r *redistest.Server) (int64, error) {
	info, err := r.DoContext(ctx, "INFO", "replication")
	if err != nil {
		return 0, err
	}
	return infoInt(info, "slave_repl_offset")
}

// infoInt returns the integer field name of an INFO reply.
func infoInt(info, name string) (int64, error) {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+":"); ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, fmt.Errorf("no %s in INFO", name)
}

// BenchmarkSteadyRing runs the steady workload on three standalone
// redis-servers through shardis in ring mode (defaults), the redigo floor
// and the go-redis v9 Ring (defaults).
func BenchmarkSteadyRing(b *testing.B) {
	servers := redistest.StartNTB(b, 3, redistest.Options{})
	addrs := make([]string, len(servers))
	for i, s := range servers {
		addrs[i] = s.Addr
	}
	f := NewFloor(addrs, 0)
	b.Cleanup(func() { f.Close() })
	runSteady(b, "redis-server", flushAll(servers), nil, randomKeys(steadyKeys), []steadyClient{
		shardisSteady("shardis-ring", newShardis(b, servers)),
		floorSteady(f),
		goRedisSteady("goredis-ring", newGoRedisRing(b, servers)),
	})
}

// BenchmarkSteadyCluster runs the steady workload on a Redis Cluster of
// three masters and three replicas through shardis in cluster mode, the
// go-redis v9 ClusterClient and rueidis, all with default options.
func BenchmarkSteadyCluster(b *testing.B) {
	cl := redistest.StartClusterTB(b, 3, 1, redistest.Options{})
	seeds := cl.Seeds()
	runSteady(b, "redis-server", flushCluster(cl), settleCluster(cl), randomKeys(steadyKeys), []steadyClient{
		shardisSteady("shardis-cluster", newShardisCluster(b, seeds)),
		goRedisSteady("goredis-cluster", newGoRedisCluster(b, seeds)),
		rueidisSteady(newRueidis(b, seeds)),
	})
}
