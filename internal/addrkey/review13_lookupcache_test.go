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
	oldLookup, oldNow := lookupNetIP, clock
	lookupNetIP = func(ctx context.Context, network, host string) ([]netip.Addr, error) {
		n.Add(1)
		return fn(ctx, host)
	}
	if now != nil {
		clock = now
	}
	resetCache()
	t.Cleanup(func() {
		lookupNetIP, clock = oldLookup, oldNow
		resetCache()
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

// A lookup cut short by the caller's context (a slow resolver) ends with
// the context, and teaches nothing: the next caller looks the name up.
func TestReview13LookupBoundByContext(t *testing.T) {
	var slow atomic.Bool
	slow.Store(true)
	n := fakeResolver(t, func(ctx context.Context, host string) ([]netip.Addr, error) {
		if slow.Load() {
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return []netip.Addr{netip.MustParseAddr("10.0.0.1")}, nil
	}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	if SameServerLookup(ctx, "10.0.0.1:6379", "redis-1:6379") {
		t.Error("a lookup that did not end matched")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the lookup took %v past its context's 50ms", d)
	}
	slow.Store(false)
	if !SameServerLookup(context.Background(), "10.0.0.1:6379", "redis-1:6379") {
		t.Error("after a lookup cut short, the name was not looked up again")
	}
	if got := n.Load(); got != 2 {
		t.Errorf("%d lookups, want 2", got)
	}
}
