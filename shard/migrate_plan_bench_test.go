package shard

import (
	"context"
	"fmt"
	"testing"

	"github.com/shardis/shardis/ring"
)

// BenchmarkFencePlan is what planning a command costs with the fence's
// count taken in the same step (planFence), side by side with planning
// as it was done before (c.loc, the count taken afterwards in execute),
// for a client without migration, an armed one and a waiting one. No I/O:
// compare it with a command's round trip (tens of µs).
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
		bt := new(batch)
		b.Run(cc.name+"/before", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				bt.reset(1)
				c.add(bt, c.loc, "GET", bt.keep(args), nil)
				if m := c.mig.Load(); m != nil && m.enterWaiting() {
					m.waiting.Add(-1)
				}
				bt.release()
			}
		})
		b.Run(cc.name+"/after", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				bt.reset(1)
				fp, loc := c.planFence()
				c.add(bt, loc, "GET", bt.keep(args), nil)
				_, release := c.bind(ctx, fp, bt.calls)
				if release != nil {
					release()
				}
				c.endPlan(fp, false)
				bt.release()
			}
		})
		c.Close()
	}
}
