package shard

import (
	"context"
	"fmt"
	"testing"

	"github.com/shardis/shardis/ring"
)

// BenchmarkFencePlan is the fence's share of planning a command: the count
// taken with the choice of locator (planFence, bind, endPlan), side by
// side with what execute did before (load the migration, count while
// waiting), for a client without migration, an armed one and a waiting
// one. The rest of planning is the same either way. No I/O: compare it
// with a command's round trip (tens of µs).
// locSink keeps the locator chosen by the benchmark alive.
var locSink locator

func BenchmarkFencePlan(b *testing.B) {
	shards := func(n int) []ring.Shard {
		var out []ring.Shard
		for i := 0; i < n; i++ {
			out = append(out, ring.Shard{Name: fmt.Sprint("s", i), Addr: fmt.Sprintf("127.0.0.1:%d", i+1), Weight: 1})
		}
		return out
	}
	from := Config{Shards: shards(3), Health: HealthOptions{Interval: -1}}
	clients := []struct {
		name string
		cfg  Config
	}{
		{"plain", Config{Shards: shards(4), Health: HealthOptions{Interval: -1}}},
		{"armed", Config{Shards: shards(4), Health: HealthOptions{Interval: -1}, Migration: &Migration{From: &from, Armed: true}}},
		{"waiting", Config{Shards: shards(4), Health: HealthOptions{Interval: -1}, Migration: &Migration{From: &from}}},
	}
	args := []any{"user:1"}
	ctx := context.Background()
	for _, cc := range clients {
		c, err := New(ctx, cc.cfg)
		if err != nil {
			b.Fatal(err)
		}
		calls := []*call{{name: "GET", args: args, info: lookupCommand("GET")}}
		b.Run(cc.name+"/before", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if m := c.mig.Load(); m != nil && m.enterWaiting() { // execute's count
					m.waiting.Add(-1)
				}
				locSink = c.loc
			}
		})
		b.Run(cc.name+"/after", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				fp, loc := c.planFence()
				if fp.counted { // as executePlanned does
					_, release := c.bind(ctx, fp, calls)
					if release != nil {
						release()
					}
				}
				c.endPlan(fp, false)
				locSink = loc
			}
		})
		c.Close()
	}
}
