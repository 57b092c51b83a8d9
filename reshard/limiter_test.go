package reshard

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/shardis/shardis/shard"
)

// TestLimiterPaces: n keys at a rate wait n/rate from the limiter's start,
// however small the rate (a due time past what a Duration holds must not
// wrap around to "now").
func TestLimiterPaces(t *testing.T) {
	tests := []struct {
		name    string
		rate    float64
		n       int
		atLeast time.Duration // 0: still waiting when the context ends
	}{
		{"1000 keys/s", 1000, 100, 90 * time.Millisecond},
		{"1e-12 keys/s", 1e-12, 512, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newLimiter(tt.rate, 0)
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			start := time.Now()
			err := l.wait(ctx, tt.n, 0)
			if tt.atLeast == 0 {
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("wait = %v after %v, want it to wait past the context", err, time.Since(start))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := time.Since(start); d < tt.atLeast {
				t.Fatalf("waited %v, want at least %v", d, tt.atLeast)
			}
		})
	}
}

// TestLimiterKeepsAtMostASecondOfCredit: after ten idle seconds, 5,000
// keys at 1,000 keys/s still wait about four seconds, not none.
func TestLimiterKeepsAtMostASecondOfCredit(t *testing.T) {
	l := newLimiter(1000, 0)
	l.start = l.start.Add(-10 * time.Second) // as if created ten seconds ago, nothing booked
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if err := l.wait(ctx, 5000, 0); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("wait = %v, want it to wait (about 4 s) past the context", err)
	}
}

// TestMoveRefusesAPaceThatDoesNotLimit: a negative, NaN or infinite pace
// is a configuration error, not "no limit".
func TestMoveRefusesAPaceThatDoesNotLimit(t *testing.T) {
	// Valid topologies, never reached: nothing listens on port 1.
	from, err := shard.ParseURL("redis-ring://127.0.0.1:1?dial_timeout=100ms")
	if err != nil {
		t.Fatal(err)
	}
	to, err := shard.ParseURL("redis-ring://127.0.0.1:1,127.0.0.1:2?dial_timeout=100ms")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []float64{-1, math.NaN(), math.Inf(1)} {
		for _, o := range []Options{{From: from, To: to, KeysPerSecond: r}, {From: from, To: to, BytesPerSecond: r}} {
			if _, err := Move(context.Background(), o); !errors.Is(err, shard.ErrBadConfig) {
				t.Errorf("Move with a pace of %v keys/s, %v B/s: %v, want ErrBadConfig", o.KeysPerSecond, o.BytesPerSecond, err)
			}
		}
	}
}
