package bench

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shardis/shardis/shard"
)

// BenchmarkMigrationFirstWrites measures first writes of moving keys
// alone: 8 goroutines each SET a different key that moves in a 3 -> 4
// ring, once, with a client on the new ring ("plain": no migration, the
// floor) and with a migrating client ("migrating": each SET is a blind
// overwrite, written at the new owner and the old copy deleted) and the
// same with SET ... NX ("migrating-nx": a conditional write, so each key
// moves with a MIGRATE first). No mover, no readers. It reports writes/s,
// the client's and the servers' CPU per write, and the MIGRATE calls the
// old owners ran with their mean time in the server (INFO commandstats).
//
//	go test ./bench -run '^$' -bench BenchmarkMigrationFirstWrites -benchtime 80000x
func BenchmarkMigrationFirstWrites(b *testing.B) {
	for _, mode := range []string{"plain", "migrating", "migrating-nx"} {
		b.Run(mode, func(b *testing.B) { firstWrites(b, mode) })
	}
}

func firstWrites(b *testing.B, mode string) {
	g := newRingGrowth(b)
	servers, from, to := g.servers, g.from, g.to
	ctx := context.Background()
	// About a quarter of the keys move: five times b.N keys hold enough.
	keys := Keys("fw", 5*b.N+1000)
	var moving []string
	for _, k := range keys {
		if g.moves(k) {
			moving = append(moving, k)
		}
	}
	if len(moving) < b.N {
		b.Fatalf("%d moving keys for %d writes", len(moving), b.N)
	}
	moving = moving[:b.N]
	g.fill(b, moving)
	cfg := to
	if mode != "plain" {
		f := from
		cfg.Migration = &shard.Migration{From: &f, Armed: true}
	}
	c, err := shard.New(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	args := []any{value}
	if mode == "migrating-nx" {
		args = []any{value, "NX"}
	}

	srv0 := ChildrenCPU("redis-server") // before the client's clock: the scan of /proc is not the client's
	b.ResetTimer()
	cli0, start := ProcessCPU(), time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < len(moving); i += 8 {
				r, err := c.Do(ctx, "SET", append([]any{moving[i]}, args...)...)
				if err := checkFirstWrite(mode, moving[i], r, err); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	took, cli, srv := time.Since(start), ProcessCPU()-cli0, ChildrenCPU("redis-server")-srv0
	b.StopTimer()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	n := float64(len(moving))
	b.ReportMetric(n/took.Seconds(), "writes/s")
	b.ReportMetric(float64(cli.Microseconds())/n, "client-cpu-µs/write")
	b.ReportMetric(float64(srv.Microseconds())/n, "server-cpu-µs/write")
	var calls, usec float64
	for _, s := range servers[:3] {
		stats, err := s.Do("INFO", "commandstats")
		if err != nil {
			b.Fatal(err)
		}
		c, u := migrateStat(stats)
		calls, usec = calls+c, usec+u
	}
	b.ReportMetric(calls, "migrate-calls")
	if calls > 0 {
		b.ReportMetric(usec/calls, "µs/migrate-call")
	}
}

// checkFirstWrite checks the reply of one SET of firstWrites: "OK" in
// the modes "plain" and "migrating", and nil in "migrating-nx", where
// every key exists at its old owner, so that an NX write that answers
// "OK" was written without the old owner being consulted.
func checkFirstWrite(mode, key string, reply any, err error) error {
	if err != nil {
		return fmt.Errorf("SET %q: %w", key, err)
	}
	if mode == "migrating-nx" {
		if reply != nil {
			return fmt.Errorf("SET %q NX: got %#v, want nil: the key exists at its old owner", key, reply)
		}
		return nil
	}
	if s, ok := reply.(string); !ok || s != "OK" {
		return fmt.Errorf("SET %q: got %#v, want \"OK\"", key, reply)
	}
	return nil
}

// migrateStat returns the calls and usec fields of cmdstat_migrate in an
// INFO commandstats reply (zeros when MIGRATE never ran).
func migrateStat(info string) (calls, usec float64) {
	for _, line := range strings.Split(info, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_migrate:")
		if !ok {
			continue
		}
		for _, f := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(f, "=")
			x, _ := strconv.ParseFloat(v, 64)
			switch k {
			case "calls":
				calls = x
			case "usec":
				usec = x
			}
		}
	}
	return calls, usec
}
