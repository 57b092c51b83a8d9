package shard_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/cpustat"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// BenchmarkHotPath measures the paths that whole-reply timeouts, blocking
// detection by arguments and the pipeline's idle hand-back touch: GET from
// 64 goroutines (automatic pipeline), GET from one goroutine (a pooled
// connection), and a pipeline of 100 GETs, against one real server. It
// reports the client's and the server's CPU per command besides the time.
func BenchmarkHotPath(b *testing.B) {
	server := redistest.StartTB(b, redistest.Options{})
	cfg := faultConfig(server.Addr, time.Second)
	c, err := shard.New(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if _, err := c.Do(ctx, "SET", "hot", "value"); err != nil {
		b.Fatal(err)
	}
	measure := func(b *testing.B, perOp int, run func(b *testing.B)) {
		w := cpustat.Start("redis-server")
		b.ResetTimer()
		run(b)
		b.StopTimer()
		n := float64(b.N * perOp)
		client, servers := w.End()
		b.ReportMetric(float64(client)/n, "client-ns/cmd")
		b.ReportMetric(float64(servers)/n, "server-ns/cmd")
	}
	b.Run("GET 64 callers", func(b *testing.B) {
		measure(b, 1, func(b *testing.B) {
			b.SetParallelism(max(1, 64/runtime.GOMAXPROCS(0)))
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := c.Do(ctx, "GET", "hot"); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	})
	b.Run("GET 1 caller", func(b *testing.B) {
		b.ReportAllocs()
		measure(b, 1, func(b *testing.B) {
			for range b.N {
				if _, err := c.Do(ctx, "GET", "hot"); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
	b.Run("pipeline 100 GET", func(b *testing.B) {
		p := c.Pipeline()
		measure(b, 100, func(b *testing.B) {
			for range b.N {
				for range 100 {
					p.Send("GET", "hot")
				}
				res, err := p.Exec(ctx)
				if err != nil || len(res) != 100 || res[99].Err != nil {
					b.Fatal(fmt.Sprint(err, len(res)))
				}
			}
		})
	})
}
