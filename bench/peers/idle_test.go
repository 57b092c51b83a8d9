package peers

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/shardis/shardis/bench"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// idleNodes is the number of fakeredis nodes of BenchmarkIdleMemory.
const idleNodes = 16

// goMemory returns the live heap and the goroutine stacks after a full
// garbage collection: what the process keeps, without what it has freed.
func goMemory() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc + m.StackInuse
}

// waitIdle waits until every pooled connection of c is back in its pool
// (automatic pipelines hand theirs back after 100 ms without commands).
func waitIdle(tb testing.TB, c *shard.Client) (conns int) {
	tb.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		conns = 0
		busy := false
		for _, n := range c.Stats().Nodes {
			conns += n.Pool.Active
			busy = busy || n.Pool.Active != n.Pool.Idle
		}
		if !busy {
			return conns
		}
		if time.Now().After(deadline) {
			tb.Fatalf("connections still borrowed after 30 s: %+v", c.Stats().Nodes)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// BenchmarkIdleMemory measures what an idle node costs the client with
// the default pool: a ring client over 16 fakeredis nodes runs a workload,
// waits until every connection is idle in its pool, and reports the heap
// and stacks it keeps beyond what it kept right after New (idle-B/node),
// the connections kept (conns/node) and their cost (idle-B/conn). The
// workloads: pipelines of 100 from one goroutine; 64 goroutines of single
// commands with automatic pipelining (the default); the same with pooled
// connections only (DisableAutoPipeline), which leaves the most
// connections idle.
func BenchmarkIdleMemory(b *testing.B) {
	addrs := startFakes(b, idleNodes, false)
	ctx := context.Background()
	keys := bench.Keys("idle", workers*perWorker/2)
	var shards []ring.Shard
	for i, a := range addrs {
		shards = append(shards, ring.Shard{Name: shardName(i), Addr: a, Weight: 1})
	}
	for _, w := range []struct {
		name     string
		noAuto   bool
		workload func(c *shard.Client) error
	}{
		{"pipelines", false, func(c *shard.Client) error { return bench.Pipelined(ctx, c, keys, value, batch) }},
		{"64-goroutines", false, func(c *shard.Client) error {
			return concurrent(ctx, keys, value, workers, perWorker, shardisSingle(c))
		}},
		{"64-goroutines-pooled", true, func(c *shard.Client) error {
			return concurrent(ctx, keys, value, workers, perWorker, shardisSingle(c))
		}},
	} {
		b.Run(w.name, func(b *testing.B) {
			var perNode, conns float64
			for b.Loop() {
				before := goMemory()
				c, err := shard.New(ctx, shard.Config{Shards: shards, DisableAutoPipeline: w.noAuto})
				if err != nil {
					b.Fatal(err)
				}
				empty := goMemory()
				for range 3 {
					if err := w.workload(c); err != nil {
						b.Fatal(err)
					}
				}
				n := waitIdle(b, c)
				idle := goMemory()
				perNode += (float64(idle) - float64(empty)) / idleNodes
				conns += float64(n) / idleNodes
				b.ReportMetric(float64(empty-before)/idleNodes, "new-B/node")
				c.Close()
			}
			b.ReportMetric(perNode/float64(b.N), "idle-B/node")
			b.ReportMetric(conns/float64(b.N), "conns/node")
			if conns > 0 {
				b.ReportMetric(perNode/conns, "idle-B/conn")
			}
		})
	}
}
