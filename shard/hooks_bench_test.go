package shard_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// BenchmarkHooks compares a client without hooks with one whose hooks do
// nothing: single GETs from 64 goroutines (automatically pipelined) and
// pipelines of 100 GETs, on two local servers.
func BenchmarkHooks(b *testing.B) {
	servers := redistest.StartNTB(b, 2, redistest.Options{})
	noop := &shard.Hooks{
		Start:    func(ctx context.Context, _ *shard.Op) context.Context { return ctx },
		Finish:   func(context.Context, *shard.Op) {},
		Command:  func(context.Context, *shard.CommandEvent) {},
		Pipeline: func(context.Context, *shard.PipelineEvent) {},
	}
	for _, h := range []struct {
		name  string
		hooks *shard.Hooks
	}{{"none", nil}, {"noop", noop}} {
		cfg := ringConfig(servers)
		cfg.Hooks = h.hooks
		c, err := shard.New(context.Background(), cfg)
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		b.Run("single/hooks="+h.name, func(b *testing.B) {
			b.SetParallelism(32) // 64 goroutines on two cores
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := c.Do(ctx, "GET", "bench:hooks"); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
		b.Run("pipeline100/hooks="+h.name, func(b *testing.B) {
			b.ReportAllocs()
			p := c.Pipeline()
			for b.Loop() {
				for i := range 100 {
					p.Send("GET", fmt.Sprintf("bench:hooks:%d", i%8))
				}
				if _, err := p.Exec(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
		c.Close()
	}
}
