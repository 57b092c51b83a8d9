package addrkey

import (
	"context"
	"errors"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"
)

// fakeResolver replaces lookupNetIP (and the cache's clock, when now is
// not nil) for the test, empties the cache, and counts the lookups.
func fakeResolver(t *testing.T, fn func(ctx context.Context, host string) ([]netip.Addr, error), now func() time.Time) *atomic.Int32 {
	t.Helper()
	var n atomic.Int32
	cacheMu.Lock()
	oldLookup, oldNow := lookupNetIP, clock
	lookupNetIP = func(ctx context.Context, network, host string) ([]netip.Addr, error) {
		n.Add(1)
		return fn(ctx, host)
	}
	if now != nil {
		clock = now
	}
	resetLocked()
	cacheMu.Unlock()
	t.Cleanup(func() {
		cacheMu.Lock()
		lookupNetIP, clock = oldLookup, oldNow
		resetLocked()
		cacheMu.Unlock()
	})
	return &n
}

// A Sentinel shard's replica is checked with ROLE after each of its
// health checks, and the master it names ("10.0.0.1:P") compared with
// the one the Sentinels announce ("redis-1:P"): each check looked the
// host name up again. Lookups are now cached for a few seconds.
func TestReview13LookupCached(t *testing.T) {
	now := time.Unix(1000, 0)
	n := fakeResolver(t, func(ctx context.Context, host string) ([]netip.Addr, error) {
		if host != "redis-1" {
			return nil, errors.New("no such host")
		}
		return []netip.Addr{netip.MustParseAddr("10.0.0.1")}, nil
	}, func() time.Time { return now })
	ctx := context.Background()
	for i := range 10 {
		if !SameServerLookup(ctx, "10.0.0.1:6379", "redis-1:6379") {
			t.Fatalf("check %d: redis-1:6379 is not 10.0.0.1:6379", i)
		}
		if SameServerLookup(ctx, "10.0.0.2:6379", "REDIS-1.:6379") {
			t.Fatalf("check %d: REDIS-1.:6379 matched 10.0.0.2:6379", i)
		}
	}
	if got := n.Load(); got != 1 {
		t.Errorf("20 comparisons with redis-1 looked it up %d times, want once", got)
	}
	now = now.Add(lookupTTL + time.Millisecond)
	if !SameServerLookup(ctx, "10.0.0.1:6379", "redis-1:6379") {
		t.Fatal("redis-1:6379 is not 10.0.0.1:6379 after the cache expired")
	}
	if got := n.Load(); got != 2 {
		t.Errorf("after the cache's time, %d lookups, want 2", got)
	}
}

// A name the resolver does not know is remembered as such, for a
// shorter time.
func TestReview13LookupFailureCachedBriefly(t *testing.T) {
	now := time.Unix(1000, 0)
	n := fakeResolver(t, func(ctx context.Context, host string) ([]netip.Addr, error) {
		return nil, errors.New("no such host")
	}, func() time.Time { return now })
	ctx := context.Background()
	for range 5 {
		if SameServerLookup(ctx, "10.0.0.1:6379", "gone:6379") {
			t.Fatal("a name that does not resolve matched an address")
		}
	}
	if got := n.Load(); got != 1 {
		t.Errorf("5 comparisons with a name that does not resolve looked it up %d times, want once", got)
	}
	now = now.Add(failedTTL + time.Millisecond)
	SameServerLookup(ctx, "10.0.0.1:6379", "gone:6379")
	if got := n.Load(); got != 2 {
		t.Errorf("after the failure's time, %d lookups, want 2", got)
	}
}

// A caller whose context ends before the resolver answers (a health
// check's timeout) goes without the answer, at once; the lookup goes on
// and its answer is kept, so the next caller has it without a lookup.
func TestReview13LookupBoundByContext(t *testing.T) {
	release := make(chan struct{})
	n := fakeResolver(t, func(ctx context.Context, host string) ([]netip.Addr, error) {
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return []netip.Addr{netip.MustParseAddr("10.0.0.1")}, nil
	}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	if got := Compare(ctx, "10.0.0.1:6379", "redis-1:6379"); got != Unknown {
		t.Errorf("a lookup that did not end: Compare = %v, want Unknown", got)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the comparison took %v past its context's 50ms", d)
	}
	close(release)
	if !SameServerLookup(context.Background(), "10.0.0.1:6379", "redis-1:6379") {
		t.Error("after the lookup ended, redis-1:6379 is not 10.0.0.1:6379")
	}
	if !SameServerLookup(context.Background(), "10.0.0.1:6379", "redis-1:6379") {
		t.Error("the kept answer: redis-1:6379 is not 10.0.0.1:6379")
	}
	if got := n.Load(); got != 1 {
		t.Errorf("%d lookups, want 1: the one cut short by the caller went on", got)
	}
}

// A resolver slower than every caller's context: no caller has its
// answer, but one lookup runs for them all and its answer is kept.
func TestReview13LookupSlowerThanEveryCaller(t *testing.T) {
	const delay = 300 * time.Millisecond
	n := fakeResolver(t, func(ctx context.Context, host string) ([]netip.Addr, error) {
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return []netip.Addr{netip.MustParseAddr("10.0.0.1")}, nil
	}, nil)
	deadline := time.Now().Add(10 * time.Second)
	calls := 0
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		got := Compare(ctx, "10.0.0.1:6379", "redis-1:6379")
		cancel()
		calls++
		if got == Same {
			break
		}
		if got != Unknown {
			t.Fatalf("comparison %d: %v, want Unknown until the lookup ends", calls, got)
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %d comparisons of 20ms, the lookup's answer (in %v) was never kept", calls, delay)
		}
	}
	if got := n.Load(); got != 1 {
		t.Errorf("%d comparisons started %d lookups, want 1", calls, got)
	}
}

// A comparison that needs a lookup the resolver fails is Unknown, not
// Different; one that needs none, or whose lookups answer, is known.
func TestReview13CompareUnknown(t *testing.T) {
	var failing atomic.Bool
	failing.Store(true)
	fakeResolver(t, func(ctx context.Context, host string) ([]netip.Addr, error) {
		if failing.Load() || host != "redis-1" {
			return nil, errors.New("server misbehaving")
		}
		return []netip.Addr{netip.MustParseAddr("10.0.0.1")}, nil
	}, nil)
	ctx := context.Background()
	for _, c := range []struct {
		a, b string
		want Match
	}{
		{"10.0.0.1:6379", "redis-1:6379", Unknown},
		{"10.0.0.2:6379", "redis-1:6379", Unknown},
		{"redis-1:6379", "REDIS-1.:6379", Same},
		{"redis-1:6379", "redis-1:6380", Different},
		{"10.0.0.1:6379", "10.0.0.2:6379", Different},
		{"localhost:6379", "127.0.0.1:6379", Same},
	} {
		if got := Compare(ctx, c.a, c.b); got != c.want {
			t.Errorf("resolver failing: Compare(%s, %s) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
	failing.Store(false)
	resetCache()
	if got := Compare(ctx, "10.0.0.1:6379", "redis-1:6379"); got != Same {
		t.Errorf("resolver back: Compare(10.0.0.1:6379, redis-1:6379) = %v, want Same", got)
	}
	if got := Compare(ctx, "10.0.0.2:6379", "redis-1:6379"); got != Different {
		t.Errorf("resolver back: Compare(10.0.0.2:6379, redis-1:6379) = %v, want Different", got)
	}
}
