package peers

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/shardis/shardis/bench"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// batch is the pipeline size every client uses in BenchmarkRingPeers.
const batch = 100

// value is what the workload writes: 16 bytes, as in package bench.
const value = "0123456789abcdef"

// shardName is the name of server i in every client.
func shardName(i int) string { return fmt.Sprintf("shard%d", i+1) }

func newShardis(tb testing.TB, servers []*redistest.Server) *shard.Client {
	tb.Helper()
	var shards []ring.Shard
	for i, s := range servers {
		shards = append(shards, ring.Shard{Name: shardName(i), Addr: s.Addr, Weight: 1})
	}
	c, err := shard.New(context.Background(), shard.Config{Shards: shards})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	return c
}

func newGoRedisRing(tb testing.TB, servers []*redistest.Server) *redis.Ring {
	tb.Helper()
	addrs := map[string]string{}
	for i, s := range servers {
		addrs[shardName(i)] = s.Addr
	}
	r := redis.NewRing(&redis.RingOptions{Addrs: addrs})
	tb.Cleanup(func() { r.Close() })
	return r
}

// goRedisPipelined runs bench.Pipelined's workload through a go-redis
// client (a Ring or a ClusterClient): SET then GET every key, batch
// commands per Pipelined call, every reply checked with bench.CheckReply.
func goRedisPipelined(ctx context.Context, r redis.UniversalClient, keys []string, value string, batch int) error {
	for _, verb := range []string{"SET", "GET"} {
		for start := 0; start < len(keys); start += batch {
			chunk := keys[start:min(start+batch, len(keys))]
			cmds, err := r.Pipelined(ctx, func(p redis.Pipeliner) error {
				for _, k := range chunk {
					if verb == "SET" {
						p.Set(ctx, k, value, 0)
					} else {
						p.Get(ctx, k)
					}
				}
				return nil
			})
			if err != nil {
				return fmt.Errorf("%w: %s pipeline: %w", bench.ErrWorkload, verb, err)
			}
			if len(cmds) != len(chunk) {
				return fmt.Errorf("%w: %s pipeline: %d results for %d commands", bench.ErrWorkload, verb, len(cmds), len(chunk))
			}
			for i, cmd := range cmds {
				var reply any
				var err error
				switch c := cmd.(type) {
				case *redis.StatusCmd:
					reply, err = c.Result()
				case *redis.StringCmd:
					reply, err = c.Result()
				default:
					err = fmt.Errorf("unexpected command type %T", cmd)
				}
				if err := bench.CheckReply(verb, reply, err, len(value)); err != nil {
					return fmt.Errorf("%w: key %q: %w", bench.ErrWorkload, chunk[i], err)
				}
			}
		}
	}
	return nil
}

// meter reports the throughput of an end-to-end benchmark: ops/s
// (operations per elapsed second), cpu-µs/op (this process's CPU time per
// operation: the client, its goroutines and the garbage collector, the
// figure that other processes' load disturbs least) and srv-µs/op (the CPU
// time of the redis-server processes the benchmark started, per
// operation, on Linux: the servers' share of the same work).
type meter struct {
	cpu, servers time.Duration
	server       string // the command name of the server processes
}

// startMeter reads the CPU clocks, counting redis-server processes as
// the servers; call it just before the b.Loop loop.
func startMeter() meter { return startMeterFor("redis-server") }

// startMeterFor is startMeter for servers whose command name is server
// (such as "fakeredis").
func startMeterFor(server string) meter {
	// The servers' clocks first: reading them scans /proc, which costs
	// this process CPU that is not the client's.
	servers := bench.ChildrenCPU(server)
	return meter{cpu: bench.ProcessCPU(), servers: servers, server: server}
}

// report reports the metrics for opsPerIter operations per iteration;
// call it just after the b.Loop loop.
func (m meter) report(b *testing.B, opsPerIter int) {
	ops := float64(opsPerIter) * float64(b.N)
	if ops <= 0 {
		return
	}
	if s := b.Elapsed().Seconds(); s > 0 {
		b.ReportMetric(ops/s, "ops/s")
	}
	if cpu := bench.ProcessCPU() - m.cpu; m.cpu > 0 && cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/1e3/ops, "cpu-µs/op")
	}
	if srv := bench.ChildrenCPU(m.server) - m.servers; srv > 0 {
		b.ReportMetric(float64(srv.Nanoseconds())/1e3/ops, "srv-µs/op")
	}
}

// BenchmarkRingPeers writes 100,000 distinct keys with SET and reads them
// back with GET, per iteration, on three local servers, through shardis
// (murmur3 ring), the go-redis v9 Ring (rendezvous hashing) and the plain
// redigo baseline (xxhash % 3), all in pipelines of 100 commands. One op is
// one command; every reply is checked.
func BenchmarkRingPeers(b *testing.B) {
	servers := redistest.StartNTB(b, 3, redistest.Options{})
	ctx := context.Background()
	keys := bench.Keys("user", 100_000)
	c := newShardis(b, servers)
	r := newGoRedisRing(b, servers)
	addrs := make([]string, len(servers))
	for i, s := range servers {
		addrs[i] = s.Addr
	}
	h, err := bench.DialHashMod(ctx, addrs, 0)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { h.Close() })
	// Warm up: each client places keys its own way, so each writes its keys
	// once here; every measured SET then overwrites an existing key, and
	// the connections are open before the clock starts.
	if err := bench.Pipelined(ctx, c, keys, value, batch); err != nil {
		b.Fatal(err)
	}
	if err := goRedisPipelined(ctx, r, keys, value, batch); err != nil {
		b.Fatal(err)
	}
	if err := h.Pipelined(ctx, keys, value, batch); err != nil {
		b.Fatal(err)
	}
	b.Run(fmt.Sprintf("shardis/batch=%d", batch), func(b *testing.B) {
		b.ReportAllocs()
		m := startMeter()
		for b.Loop() {
			if err := bench.Pipelined(ctx, c, keys, value, batch); err != nil {
				b.Fatal(err)
			}
		}
		m.report(b, 2*len(keys))
	})
	b.Run(fmt.Sprintf("goredis-ring/batch=%d", batch), func(b *testing.B) {
		b.ReportAllocs()
		m := startMeter()
		for b.Loop() {
			if err := goRedisPipelined(ctx, r, keys, value, batch); err != nil {
				b.Fatal(err)
			}
		}
		m.report(b, 2*len(keys))
	})
	b.Run(fmt.Sprintf("redigo-hashmod/batch=%d", batch), func(b *testing.B) {
		b.ReportAllocs()
		m := startMeter()
		for b.Loop() {
			if err := h.Pipelined(ctx, keys, value, batch); err != nil {
				b.Fatal(err)
			}
		}
		m.report(b, 2*len(keys))
	})
}

// TestRendezvousMatchesGoRedisRing writes keys through a go-redis Ring and
// checks that each landed on the server bench.Rendezvous names, so that the
// lookup baseline of package bench is the go-redis algorithm and not an
// approximation of it.
func TestRendezvousMatchesGoRedisRing(t *testing.T) {
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	ctx := context.Background()
	r := newGoRedisRing(t, servers)
	names := []string{shardName(0), shardName(1), shardName(2)}
	rv := bench.NewRendezvous(names)
	keys := append(bench.Keys("rv", 300), "{tag}a", "x{tag}y", "{}plain", "a{b")
	if err := goRedisPipelined(ctx, r, keys, value, 50); err != nil {
		t.Fatal(err)
	}
	counts := make([]int, len(servers))
	for _, k := range keys {
		want := rv.Locate(k)
		counts[want]++
		for i, s := range servers {
			got, err := s.Do("EXISTS", k)
			if err != nil {
				t.Fatal(err)
			}
			if (got == "1") != (i == want) {
				t.Fatalf("key %q: EXISTS on %s = %s, but Rendezvous says %s", k, names[i], got, names[want])
			}
		}
	}
	for i, n := range counts {
		if n == 0 {
			t.Errorf("no key went to %s (counts %v): the check proves nothing", names[i], counts)
		}
	}
}

// TestWorkloadsAgree runs the three clients' workloads once on a few keys.
func TestWorkloadsAgree(t *testing.T) {
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	ctx := context.Background()
	keys := bench.Keys("agree", 250)
	if err := bench.Pipelined(ctx, newShardis(t, servers), keys, value, batch); err != nil {
		t.Fatal(err)
	}
	if err := goRedisPipelined(ctx, newGoRedisRing(t, servers), keys, value, batch); err != nil {
		t.Fatal(err)
	}
	// After both wrote every key, each server holds some of them.
	for _, s := range servers {
		n, err := s.Do("DBSIZE")
		if err != nil {
			t.Fatal(err)
		}
		if n == "0" {
			t.Errorf("server %s holds no key", s.Addr)
		}
	}
}
