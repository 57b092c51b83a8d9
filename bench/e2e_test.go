package bench

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// value is what the end-to-end workloads write: 16 bytes.
const value = "0123456789abcdef"

// startServers starts three redis-server processes for one benchmark
// function (its sub-benchmarks share them); they stop when it ends.
func startServers(b *testing.B) []*redistest.Server {
	b.Helper()
	return redistest.StartNTB(b, 3, redistest.Options{})
}

func addrs(servers []*redistest.Server) []string {
	out := make([]string, len(servers))
	for i, s := range servers {
		out[i] = s.Addr
	}
	return out
}

// newClient returns a ring-mode client (default murmur3 ring) over servers,
// closed when b ends.
func newClient(b *testing.B, servers []*redistest.Server) *shard.Client {
	b.Helper()
	var shards []ring.Shard
	for _, s := range servers {
		shards = append(shards, ring.Shard{Addr: s.Addr, Weight: 1})
	}
	c, err := shard.New(context.Background(), shard.Config{Shards: shards})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return c
}

// meter reports the throughput of an end-to-end benchmark: ops/s
// (operations per elapsed second) and cpu-µs/op (this process's CPU time per
// operation: the client, its goroutines and the garbage collector, not the
// servers), the figure that other processes' load disturbs least.
type meter struct{ cpu time.Duration }

// startMeter reads the CPU clock; call it just before the b.Loop loop.
func startMeter() meter { return meter{cpu: ProcessCPU()} }

// report reports both metrics for opsPerIter operations per iteration;
// call it just after the b.Loop loop.
func (m meter) report(b *testing.B, opsPerIter int) {
	ops := float64(opsPerIter) * float64(b.N)
	if ops <= 0 {
		return
	}
	if s := b.Elapsed().Seconds(); s > 0 {
		b.ReportMetric(ops/s, "ops/s")
	}
	if cpu := ProcessCPU() - m.cpu; m.cpu > 0 && cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/1e3/ops, "cpu-µs/op")
	}
}

// BenchmarkPipeline100k writes 100,000 distinct keys with SET and reads them
// back with GET on three local servers, per iteration, three ways:
//
//   - shardis/batch=N: Client.Pipeline, one Exec per N commands;
//   - redigo-hashmod/batch=N: one redigo connection per server, keys routed by
//     xxhash % 3, Send, Flush, Receive with nothing in between;
//   - one-by-one: Client.Do per command, over 10,000 keys only (it is slow).
//
// One op is one command; every reply is checked.
func BenchmarkPipeline100k(b *testing.B) {
	servers := startServers(b)
	ctx := context.Background()
	c := newClient(b, servers)
	h, err := DialHashMod(ctx, addrs(servers), 0)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { h.Close() })
	keys := Keys("user", 100_000)
	// Warm up: the two clients place keys differently, so each writes its
	// keys once here and every measured SET overwrites an existing key
	// rather than the first client measured paying for creating them.
	if err := Pipelined(ctx, c, keys, value, 1000); err != nil {
		b.Fatal(err)
	}
	if err := h.Pipelined(ctx, keys, value, 1000); err != nil {
		b.Fatal(err)
	}
	for _, batch := range []int{100, 1000} {
		b.Run(fmt.Sprintf("shardis/batch=%d", batch), func(b *testing.B) {
			b.ReportAllocs()
			m := startMeter()
			for b.Loop() {
				if err := Pipelined(ctx, c, keys, value, batch); err != nil {
					b.Fatal(err)
				}
			}
			m.report(b, 2*len(keys))
		})
	}
	for _, batch := range []int{100, 1000} {
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
	b.Run("one-by-one", func(b *testing.B) {
		few := keys[:10_000]
		b.ReportAllocs()
		m := startMeter()
		for b.Loop() {
			if err := OneByOne(ctx, c, few, value); err != nil {
				b.Fatal(err)
			}
		}
		m.report(b, 2*len(few))
	})
}

// BenchmarkMGET1000 reads 1,000 keys spread over three servers:
//
//   - shardis-mget: one Client.Do("MGET", 1000 keys), split per shard, sent
//     in parallel and merged;
//   - shardis-1000-gets: 1,000 Client.Do("GET") calls, one after the other;
//   - shardis-pipelined-gets: 1,000 GETs in one Pipeline.Exec.
//
// One op is one key read.
func BenchmarkMGET1000(b *testing.B) {
	servers := startServers(b)
	ctx := context.Background()
	c := newClient(b, servers)
	keys := Keys("mget", 1000)
	if err := Pipelined(ctx, c, keys, value, 0); err != nil {
		b.Fatal(err)
	}
	args := make([]any, len(keys))
	for i, k := range keys {
		args[i] = k
	}
	b.Run("shardis-mget", func(b *testing.B) {
		b.ReportAllocs()
		m := startMeter()
		for b.Loop() {
			r, err := c.Do(ctx, "MGET", args...)
			if err != nil {
				b.Fatal(err)
			}
			vals, ok := r.([]any)
			if !ok || len(vals) != len(keys) {
				b.Fatalf("MGET replied %T with %d values", r, len(vals))
			}
			for i, v := range vals {
				if err := CheckReply("GET", v, nil, len(value)); err != nil {
					b.Fatalf("key %q: %v", keys[i], err)
				}
			}
		}
		m.report(b, len(keys))
	})
	b.Run("shardis-1000-gets", func(b *testing.B) {
		b.ReportAllocs()
		m := startMeter()
		for b.Loop() {
			for _, k := range keys {
				r, err := c.Do(ctx, "GET", k)
				if err := CheckReply("GET", r, err, len(value)); err != nil {
					b.Fatalf("key %q: %v", k, err)
				}
			}
		}
		m.report(b, len(keys))
	})
	b.Run("shardis-pipelined-gets", func(b *testing.B) {
		p := c.Pipeline()
		b.ReportAllocs()
		m := startMeter()
		for b.Loop() {
			for _, k := range keys {
				p.Send("GET", k)
			}
			res, err := p.Exec(ctx)
			if err != nil {
				b.Fatal(err)
			}
			for i, r := range res {
				if err := CheckReply("GET", r.Reply, r.Err, len(value)); err != nil {
					b.Fatalf("key %q: %v", keys[i], err)
				}
			}
		}
		m.report(b, len(keys))
	})
}

// TestWorkloadsAgainstServers runs every workload once on a few keys, so that
// the benchmarks' code paths are checked by the normal test suite.
func TestWorkloadsAgainstServers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server processes")
	}
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	ctx := context.Background()
	var shards []ring.Shard
	for _, s := range servers {
		shards = append(shards, ring.Shard{Addr: s.Addr, Weight: 1})
	}
	c, err := shard.New(ctx, shard.Config{Shards: shards})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	keys := Keys("wl", 300)
	for _, batch := range []int{0, 7, 100, 1000} {
		if err := Pipelined(ctx, c, keys, value, batch); err != nil {
			t.Fatalf("Pipelined batch %d: %v", batch, err)
		}
	}
	if err := OneByOne(ctx, c, keys[:20], value); err != nil {
		t.Fatalf("OneByOne: %v", err)
	}
	h, err := DialHashMod(ctx, addrs(servers), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	hkeys := Keys("hm", 300)
	for _, batch := range []int{0, 7, 100} {
		if err := h.Pipelined(ctx, hkeys, value, batch); err != nil {
			t.Fatalf("HashMod batch %d: %v", batch, err)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := h.Pipelined(cctx, hkeys, value, 100); !errors.Is(err, ErrWorkload) || !errors.Is(err, context.Canceled) {
		t.Errorf("HashMod with a cancelled context: %v, want ErrWorkload and context.Canceled", err)
	}
	// Every HashMod key is on the server Locate names, and only there.
	for _, k := range hkeys[:30] {
		for i, s := range servers {
			got, err := s.Do("EXISTS", k)
			if err != nil {
				t.Fatal(err)
			}
			if want := i == h.Locate(k); (got == "1") != want {
				t.Errorf("key %q on server %d: EXISTS = %s, Locate = %d", k, i, got, h.Locate(k))
			}
		}
	}
	// A failing client fails each workload with an error saying why.
	c.Close()
	if err := Pipelined(ctx, c, keys[:1], value, 0); !errors.Is(err, ErrWorkload) || !errors.Is(err, shard.ErrClosed) {
		t.Errorf("Pipelined on a closed client: %v, want ErrWorkload and shard.ErrClosed", err)
	}
	if err := OneByOne(ctx, c, keys[:1], value); !errors.Is(err, ErrWorkload) || !errors.Is(err, shard.ErrClosed) {
		t.Errorf("OneByOne on a closed client: %v, want ErrWorkload and shard.ErrClosed", err)
	}
}
