package bench

import (
	"context"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// The read loops of BenchmarkMigrationClient count a GET only when it
// found the value written: a migrating client that lost a key (nil) must
// fail the benchmark, not make it look faster.
func TestReview15MigrationReadLoopsCheckValues(t *testing.T) {
	srv := redistest.StartNTB(t, 1, redistest.Options{})[0]
	ctx := context.Background()
	c, err := shard.New(ctx, shard.Config{Shards: []ring.Shard{{Name: "s1", Addr: srv.Addr, Weight: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	written := Keys("rr-there", 50)
	if err := Pipelined(ctx, c, written, value, 0); err != nil {
		t.Fatal(err)
	}
	missing := Keys("rr-gone", 50) // never written: every GET answers nil

	for _, tc := range []struct {
		name string
		run  func(b *testing.B)
		fail bool
	}{
		{"readOnly of written keys", func(b *testing.B) { readOnly(ctx, b, c, written, 2, 20*time.Millisecond) }, false},
		{"readOnly of missing keys", func(b *testing.B) { readOnly(ctx, b, c, missing, 2, 20*time.Millisecond) }, true},
		{"readBoth GET of missing moving keys", func(b *testing.B) {
			readBoth(ctx, b, c, "GET", missing, written, 20*time.Millisecond, true)
		}, true},
		{"readBoth GET with missing staying keys", func(b *testing.B) {
			readBoth(ctx, b, c, "GET", written, missing, 20*time.Millisecond, true)
		}, true},
		{"readBoth SET", func(b *testing.B) { readBoth(ctx, b, c, "SET", written, written, 20*time.Millisecond, true) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// testing.Benchmark returns a zero result when the function
			// failed.
			res := testing.Benchmark(tc.run)
			if failed := res.N == 0; failed != tc.fail {
				t.Errorf("failed = %v, want %v", failed, tc.fail)
			}
		})
	}
}
