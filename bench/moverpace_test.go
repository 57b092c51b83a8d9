package bench

import (
	"context"
	"fmt"
	"testing"

	"github.com/shardis/shardis/reshard"
)

// BenchmarkMoverPace measures what a paced move costs per key against an
// unpaced one: a 3 -> 4 ring of 300,000 small keys (about 73,000 move),
// the mover at 5,000 keys/s and at full speed, with the client's and the
// servers' CPU per key moved and the keys per MIGRATE (from the servers'
// INFO commandstats). A pace only spreads the same batches over time, so
// the CPU per key should stay near the unpaced one (plus the four
// servers' idle cost over the longer run).
//
//	go test ./bench -run '^$' -bench BenchmarkMoverPace -benchtime 1x -count 2
func BenchmarkMoverPace(b *testing.B) {
	g := newRingGrowth(b)
	ctx := context.Background()
	keys := Keys("mp", 300_000)
	for _, pace := range []float64{5000, 0} {
		b.Run(fmt.Sprintf("keys-per-s=%g", pace), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				for _, s := range g.servers {
					if _, err := s.Do("FLUSHALL"); err != nil {
						b.Fatal(err)
					}
					if _, err := s.Do("CONFIG", "RESETSTAT"); err != nil {
						b.Fatal(err)
					}
				}
				g.fill(b, keys)
				b.StartTimer()
				srv0 := ChildrenCPU("redis-server") // before the client's clock: the scan of /proc is not the client's
				cli0 := ProcessCPU()
				rep, err := reshard.Move(ctx, reshard.Options{From: g.from, To: g.to, SkipClientCheck: true,
					SkipVerify: true, KeysPerSecond: pace})
				cli, srv := ProcessCPU()-cli0, ChildrenCPU("redis-server")-srv0
				b.StopTimer()
				if err != nil {
					b.Fatal(err)
				}
				if rep.Moved == 0 {
					b.Fatal("nothing moved")
				}
				var calls float64
				for _, s := range g.servers {
					stats, err := s.Do("INFO", "commandstats")
					if err != nil {
						b.Fatal(err)
					}
					c, _ := migrateStat(stats)
					calls += c
				}
				n := float64(rep.Moved)
				b.ReportMetric(n/rep.Elapsed.Seconds(), "keys/s")
				b.ReportMetric(float64(cli.Microseconds())/n, "client-cpu-µs/key")
				b.ReportMetric(float64(srv.Microseconds())/n, "server-cpu-µs/key")
				b.ReportMetric(n/calls, "keys/migrate")
				b.StartTimer()
			}
		})
	}
}
