package reshard_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/shard"
)

// BenchmarkMoveOutOfACluster measures the mover moving 20,000 small keys
// out of a 3-master cluster into a 3-shard ring (the rollback of a ring
// moved into a cluster), side by side with the forward direction on the
// same servers: a cluster node takes only keys of one slot in a
// MIGRATE ... KEYS, so keys leave a cluster one slot's batch at a time.
// It reports keys per second.
func BenchmarkMoveOutOfACluster(b *testing.B) {
	ctx := context.Background()
	servers := redistest.StartNTB(b, 3, redistest.Options{})
	rc := redistest.StartClusterTB(b, 3, 0, redistest.Options{})
	addrs := make([]string, len(servers))
	for i, s := range servers {
		addrs[i] = s.Addr
	}
	ring, err := shard.ParseURL("redis-ring://" + strings.Join(addrs, ",") + "?names=a,b,c&health_interval=-1s")
	if err != nil {
		b.Fatal(err)
	}
	cl, err := shard.ParseURL("redis-cluster://" + strings.Join(rc.Seeds(), ",") + "?health_interval=-1s")
	if err != nil {
		b.Fatal(err)
	}
	const n = 20000
	for _, dir := range []struct {
		name     string
		from, to shard.Config
		dump     bool
	}{{"ring to cluster", ring, cl, false}, {"cluster to ring", cl, ring, false}, {"cluster to ring, dump", cl, ring, true}} {
		b.Run(dir.name, func(b *testing.B) {
			var moved int64
			var took time.Duration
			for range b.N {
				b.StopTimer()
				for _, s := range append(append([]*redistest.Server(nil), servers...), rc.Masters()...) {
					if _, err := s.Do("FLUSHALL"); err != nil {
						b.Fatal(err)
					}
				}
				c, err := shard.New(ctx, dir.from)
				if err != nil {
					b.Fatal(err)
				}
				p := c.Pipeline()
				for i := 0; i < n; i++ {
					p.Send("SET", fmt.Sprintf("out:%d", i), i)
				}
				if _, err := p.Exec(ctx); err != nil {
					b.Fatal(err)
				}
				c.Close()
				b.StartTimer()
				start := time.Now()
				rep, err := reshard.Move(ctx, reshard.Options{From: dir.from, To: dir.to, Dump: dir.dump, SkipClientCheck: true, SkipVerify: true})
				if err != nil {
					b.Fatal(err)
				}
				took += time.Since(start)
				moved += rep.Moved
			}
			if moved != int64(n*b.N) {
				b.Fatalf("moved %d keys, want %d", moved, n*b.N)
			}
			b.ReportMetric(float64(moved)/took.Seconds(), "keys/s")
		})
	}
}
