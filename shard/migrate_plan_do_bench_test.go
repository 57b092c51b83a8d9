package shard_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/shardis/shardis/internal/cpustat"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// BenchmarkFenceDo is a GET from one goroutine against real servers, on a
// key whose owner does not change, by a plain client and by clients of a
// 1 -> 2 shard migration waiting behind the fence and armed: what the
// fence's planning costs a whole command. It reports the client's and the
// servers' CPU per command besides the time.
func BenchmarkFenceDo(b *testing.B) {
	servers := redistest.StartNTB(b, 2, redistest.Options{})
	from, to := ringConfig(servers[:1]), ringConfig(servers)
	from.Health.Interval, to.Health.Interval = -1, -1
	ctx := context.Background()
	r, err := ring.New(to.RingConfig())
	if err != nil {
		b.Fatal(err)
	}
	var key string
	for i := 0; ; i++ {
		key = fmt.Sprint("stay:", i)
		if r.Shards()[r.Locate(key)].Addr == servers[0].Addr {
			break
		}
	}
	waiting, armed := to, to
	f := from
	waiting.Migration = &shard.Migration{From: &f}
	armed.Migration = &shard.Migration{From: &f, Armed: true}
	for _, tc := range []struct {
		name string
		cfg  shard.Config
	}{{"plain", from}, {"waiting", waiting}, {"armed", armed}} {
		c, err := shard.New(ctx, tc.cfg)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := c.Do(ctx, "SET", key, "v"); err != nil {
			b.Fatal(err)
		}
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			w := cpustat.Start("redis-server")
			for b.Loop() {
				if _, err := c.Do(ctx, "GET", key); err != nil {
					b.Fatal(err)
				}
			}
			n := float64(b.N)
			client, servers := w.End()
			b.ReportMetric(float64(client)/n, "client-ns/cmd")
			b.ReportMetric(float64(servers)/n, "server-ns/cmd")
		})
		c.Close()
	}
}
