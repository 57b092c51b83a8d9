//go:build unix

package shard

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/shardis/shardis/cluster"
)

// Simulations of a cluster of 1,000 masters with 2 replicas each: no
// servers, only a generated CLUSTER SHARDS reply (from topologyServer, an
// in-process seed, when the client must fetch it).

const (
	scaleMasters  = 1000
	scaleReplicas = 2
)

// newScaleClient returns a cluster client that discovered the simulated
// cluster served by srv: health checks and periodic refreshes off, so
// that it dials nothing but the seed.
func newScaleClient(tb testing.TB, srv *topologyServer) *Client {
	tb.Helper()
	c, err := New(context.Background(), Config{
		Mode:   ModeCluster,
		Seeds:  []string{srv.addr()},
		Health: HealthOptions{Interval: -1},
		Cluster: ClusterOptions{
			RefreshInterval: -1,
		},
	})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	return c
}

// BenchmarkScaleClusterRefresh measures the slot map of 1,000 masters × 2
// replicas: parsing the CLUSTER SHARDS reply (parse), installing it in a
// new client (first-install: every node registered), and a client's whole
// refresh through a connection to the seed, when the topology has not
// changed (refresh-same: fetch, decode, parse, compare) and when one slot
// moved (refresh-changed: also installs). B/op is the garbage of one
// refresh.
func BenchmarkScaleClusterRefresh(b *testing.B) {
	srv := startTopologyServer(b)
	topo := newBigTopology(scaleMasters, scaleReplicas, srv.addr())
	reply := topo.reply()
	b.Run("parse", func(b *testing.B) {
		b.ReportAllocs()
		m := startCPU()
		for b.Loop() {
			if _, err := cluster.ParseShards(reply, srv.addr()); err != nil {
				b.Fatal(err)
			}
		}
		m.report(b)
	})
	t, err := cluster.ParseShards(reply, srv.addr())
	if err != nil {
		b.Fatal(err)
	}
	b.Run("first-install", func(b *testing.B) {
		b.ReportAllocs()
		m := startCPU()
		for b.Loop() {
			newClusterRouter(newNodeTable(), nil).install(t)
		}
		m.report(b)
	})
	srv.set(topo)
	c := newScaleClient(b, srv)
	if n := len(c.cl().Table().Masters()); n != scaleMasters {
		b.Fatalf("discovered %d masters, want %d", n, scaleMasters)
	}
	ctx := context.Background()
	b.Run("refresh-same", func(b *testing.B) {
		b.ReportAllocs()
		m := startCPU()
		for b.Loop() {
			if err := c.Refresh(ctx); err != nil {
				b.Fatal(err)
			}
		}
		m.report(b)
	})
	moved := newBigTopology(scaleMasters, scaleReplicas, srv.addr())
	moved.owner[0] = scaleMasters - 1
	alternate := [2][]byte{encode(nil, topo.reply()), encode(nil, moved.reply())}
	b.Run("refresh-changed", func(b *testing.B) {
		b.ReportAllocs()
		m := startCPU()
		i := 0
		for b.Loop() {
			i++
			srv.reply.Store(&alternate[i%2])
			if err := c.Refresh(ctx); err != nil {
				b.Fatal(err)
			}
		}
		m.report(b)
		if got := c.cl().Table().Master(0).Addr; got != [2]string{topo.addr(0, -1), moved.addr(scaleMasters-1, -1)}[i%2] {
			b.Fatalf("slot 0 served by %s after the last refresh", got)
		}
	})
}

// movedStorm delivers n MOVED redirects for the slots that a reshard moves
// (every 16th slot goes to the next master: 1,024 slots), from workers
// goroutines, the way the executor handles each: judge the failed call
// (which points the slot at its new owner at once), then ask for a
// refresh. It returns the refreshes that ran and how long the storm took.
func movedStorm(tb testing.TB, c *Client, srv *topologyServer, n, workers int) (refreshes int64, took time.Duration) {
	tb.Helper()
	before := newBigTopology(scaleMasters, scaleReplicas, srv.addr())
	after := newBigTopology(scaleMasters, scaleReplicas, srv.addr())
	var slots []int
	for s := 0; s < cluster.SlotCount; s += 16 {
		after.owner[s] = (before.owner[s] + 1) % scaleMasters
		slots = append(slots, s)
	}
	srv.set(before)
	ctx := context.Background()
	if err := c.Refresh(ctx); err != nil {
		tb.Fatal(err)
	}
	srv.set(after)
	time.Sleep(c.clusterOpts().MinRefreshInterval) // the rate limit starts afresh
	start := c.refr.count.Load()
	t0 := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				s := slots[i%len(slots)]
				from := c.cl().state.Load().master[s]
				cl := &call{name: "GET", node: int(from), group: s,
					err: redis.Error(fmt.Sprintf("MOVED %d %s", s, after.addr(after.owner[s], -1)))}
				v, refresh := c.judge(cl)
				if v != retryNow {
					errs[w] = fmt.Errorf("MOVED judged %v", v)
					return
				}
				if refresh {
					c.refresh(ctx, false)
				}
			}
		})
	}
	wg.Wait()
	took = time.Since(t0)
	for _, err := range errs {
		if err != nil {
			tb.Fatal(err)
		}
	}
	// Let the last refresh end before counting.
	c.refresh(ctx, true)
	return c.refr.count.Load() - start, took
}

// BenchmarkScaleMovedStorm delivers 10,000 MOVED redirects during a
// reshard of the simulated cluster from 64 goroutines and reports the full
// refreshes that ran (refreshes/storm), the rate limit's bound for the
// storm's duration (limit/storm: one per MinRefreshInterval, plus the one
// in flight), and the time and garbage of the whole storm.
func BenchmarkScaleMovedStorm(b *testing.B) {
	srv := startTopologyServer(b)
	srv.set(newBigTopology(scaleMasters, scaleReplicas, srv.addr()))
	c := newScaleClient(b, srv)
	b.ReportAllocs()
	var refreshes int64
	var took time.Duration
	m := startCPU()
	for b.Loop() {
		r, d := movedStorm(b, c, srv, 10_000, 64)
		refreshes += r
		took += d
	}
	m.report(b)
	b.ReportMetric(float64(refreshes)/float64(b.N), "refreshes/storm")
	b.ReportMetric(float64(took/c.clusterOpts().MinRefreshInterval+1)/float64(b.N), "limit/storm")
	b.ReportMetric(float64(took.Milliseconds())/float64(b.N), "storm-ms")
}

// TestMovedStormRefreshesAtRateLimit checks the rate limit under a storm
// of MOVED redirects on the simulated cluster: however many arrive, the
// full refreshes stay within one per MinRefreshInterval of the storm's
// duration (plus the one that may be in flight), and afterwards every
// moved slot points at its new master.
func TestMovedStormRefreshesAtRateLimit(t *testing.T) {
	srv := startTopologyServer(t)
	srv.set(newBigTopology(scaleMasters, scaleReplicas, srv.addr()))
	c := newScaleClient(t, srv)
	refreshes, took := movedStorm(t, c, srv, 10_000, 64)
	limit := int64(took/c.clusterOpts().MinRefreshInterval) + 1
	if refreshes < 1 || refreshes > limit {
		t.Errorf("%d full refreshes during a storm of %v; want 1 to %d", refreshes, took, limit)
	}
	after := newBigTopology(scaleMasters, scaleReplicas, srv.addr())
	tb := c.cl().Table()
	for s := 0; s < cluster.SlotCount; s += 16 {
		want := after.addr((s*scaleMasters/cluster.SlotCount+1)%scaleMasters, -1)
		if got := tb.Master(s).Addr; got != want {
			t.Fatalf("slot %d served by %s after the storm, want %s", s, got, want)
		}
	}
	t.Logf("%d refreshes in %v for 10,000 MOVED", refreshes, took)
}
