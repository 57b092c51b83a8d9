package reshard

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/cpustat"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// BenchmarkReview13MoverMeasure moves 100,000 keys of 16 bytes from a
// 3-server ring to a 4-server one (a quarter of them move; with
// SHARDIS_BENCH_MEASURE_ONE set, from one server to three, every key
// moving), SHARDIS_BENCH_MEASURE_ROUNDS times (4), and logs the keys
// scanned per second (over all rounds, and the median round), the
// mover's CPU and the servers' CPU per key scanned: the mover's cost on
// small keys, where sizing each moving key (MEMORY USAGE) weighs most.
func BenchmarkReview13MoverMeasure(b *testing.B) {
	ctx := context.Background()
	servers := redistest.StartNTB(b, 4, redistest.Options{})
	addrs := make([]string, len(servers))
	for i, s := range servers {
		addrs[i] = s.Addr
	}
	from, err := shard.ParseURL("redis-ring://" + strings.Join(addrs[:3], ",") + "?names=a,b,c&health_interval=-1s")
	if err != nil {
		b.Fatal(err)
	}
	to, err := shard.ParseURL("redis-ring://" + strings.Join(addrs, ",") + "?names=a,b,c,d&health_interval=-1s")
	if err != nil {
		b.Fatal(err)
	}
	if os.Getenv("SHARDIS_BENCH_MEASURE_ONE") != "" { // one old node, every key moving to three new ones
		if from, err = shard.ParseURL("redis-ring://" + addrs[0] + "?names=a&health_interval=-1s"); err != nil {
			b.Fatal(err)
		}
		if to, err = shard.ParseURL("redis-ring://" + strings.Join(addrs[1:], ",") + "?names=b,c,d&health_interval=-1s"); err != nil {
			b.Fatal(err)
		}
	}
	const n = 100_000
	modes := []string{"mover"} // one per way of moving compared, run in turn
	type total struct {
		keys, moved int64
		wall, cpu   time.Duration
		srv         time.Duration
		rates       []float64
	}
	totals := make([]total, len(modes))
	rounds := 4
	if v, err := strconv.Atoi(os.Getenv("SHARDIS_BENCH_MEASURE_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	for range b.N {
		for r := 0; r < rounds; r++ {
			for mode := range modes {
				for _, s := range servers {
					if _, err := s.Do("FLUSHALL"); err != nil {
						b.Fatal(err)
					}
				}
				c, err := shard.New(ctx, from)
				if err != nil {
					b.Fatal(err)
				}
				p := c.Pipeline()
				for i := range n {
					p.Send("SET", fmt.Sprintf("mm:%d", i), "0123456789abcdef")
				}
				if _, err := p.Exec(ctx); err != nil {
					b.Fatal(err)
				}
				c.Close()
				w, start := cpustat.Start("redis-server"), time.Now()
				rep, err := Move(ctx, Options{From: from, To: to, SkipClientCheck: true, SkipVerify: true})
				t := &totals[mode]
				t.wall += time.Since(start)
				client, servers := w.End()
				t.cpu += client
				t.srv += servers
				if err != nil {
					b.Fatal(err)
				}
				t.keys += rep.Scanned
				t.rates = append(t.rates, float64(rep.Scanned)/rep.Elapsed.Seconds())
				t.moved += rep.Moved
			}
		}
	}
	b.ReportMetric(float64(totals[0].keys)/totals[0].wall.Seconds(), "keys/s")
	for i, m := range modes {
		t := totals[i]
		slices.Sort(t.rates)
		b.Logf("%-20s %6.0f keys/s (median %6.0f; %d moved of %d)  mover %.2f µs/key  servers %.2f µs/key", m,
			float64(t.keys)/t.wall.Seconds(), t.rates[len(t.rates)/2], t.moved, t.keys,
			float64(t.cpu.Microseconds())/float64(t.keys), float64(t.srv.Microseconds())/float64(t.keys))
	}
}
