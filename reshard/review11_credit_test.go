package reshard

import (
	"context"
	"testing"
	"time"
)

// TestReview11LimiterCreditStaysSmall: after a pause (keys that stay, a
// slow old node) the limiter let a whole second of unused pace through at
// once, on top of the pace: at 1,000 keys/s, 6,000 keys passed within
// 5 s, 20% over. The credit kept for a burst now adds at most 2%.
func TestReview11LimiterCreditStaysSmall(t *testing.T) {
	l := newLimiter(1000, 0)
	l.start = l.start.Add(-10 * time.Second) // ten idle seconds
	ctx := context.Background()
	start := time.Now()
	passed := 0
	for {
		if err := l.wait(ctx, 100, 0); err != nil {
			t.Fatal(err)
		}
		if time.Since(start) > 5*time.Second {
			break
		}
		passed += 100
	}
	if limit := 5500; passed > limit {
		t.Fatalf("%d keys passed within 5 s at 1,000 keys/s after a pause, want at most %d", passed, limit)
	}
	if passed < 4500 {
		t.Fatalf("only %d keys passed within 5 s at 1,000 keys/s", passed)
	}
}
