package shard_test

import (
	"context"
	"strings"
	"testing"

	"github.com/shardis/shardis/internal/cpustat"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// BenchmarkDoByMode measures Do on a plain ring client (3 shards) and a
// plain cluster client (3 masters), one caller each, against real
// servers: a GET and a 3-key MGET spread over the nodes. Run it before and
// after a change of the routing state (a ring client that can become a
// cluster client at run time) to check that the hot path of clients that
// never migrate does not grow. It reports the client's and the servers'
// CPU per command besides the time.
func BenchmarkDoByMode(b *testing.B) {
	ctx := context.Background()
	servers := redistest.StartNTB(b, 3, redistest.Options{})
	cl := redistest.StartClusterTB(b, 3, 0, redistest.Options{})
	ring := make([]string, len(servers))
	for i, s := range servers {
		ring[i] = s.Addr
	}
	ringCfg, err := shard.ParseURL("redis-ring://" + strings.Join(ring, ",") + "?names=a,b,c&health_interval=0")
	if err != nil {
		b.Fatal(err)
	}
	clusterCfg, err := shard.ParseURL("redis-cluster://" + strings.Join(cl.Seeds(), ",") + "?health_interval=0")
	if err != nil {
		b.Fatal(err)
	}
	for _, mode := range []struct {
		name string
		cfg  shard.Config
	}{{"ring", ringCfg}, {"cluster", clusterCfg}} {
		c, err := shard.New(ctx, mode.cfg)
		if err != nil {
			b.Fatal(err)
		}
		keys := []any{"bench:a", "bench:b", "bench:c"}
		for _, k := range keys {
			if _, err := c.Do(ctx, "SET", k, "v"); err != nil {
				b.Fatal(err)
			}
		}
		measure := func(b *testing.B, run func()) {
			b.ReportAllocs()
			w := cpustat.Start("redis-server")
			b.ResetTimer()
			for range b.N {
				run()
			}
			b.StopTimer()
			n := float64(b.N)
			client, servers := w.End()
			b.ReportMetric(float64(client)/n, "client-ns/op")
			b.ReportMetric(float64(servers)/n, "server-ns/op")
		}
		b.Run(mode.name+"/GET", func(b *testing.B) {
			measure(b, func() {
				if _, err := c.Do(ctx, "GET", "bench:a"); err != nil {
					b.Fatal(err)
				}
			})
		})
		b.Run(mode.name+"/MGET3", func(b *testing.B) {
			measure(b, func() {
				if _, err := c.Do(ctx, "MGET", keys...); err != nil {
					b.Fatal(err)
				}
			})
		})
		c.Close()
	}
}
