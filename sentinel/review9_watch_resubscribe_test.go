package sentinel_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/sentinel"
)

// TestReview9WatcherReportsLossAndResubscription: a Watcher says why a
// Sentinel is not subscribed (Err, a *QueryError naming it) while it is
// down, calls Resubscribed once the subscription is back (a failover may
// have been announced meanwhile) and not for the first subscription, and
// clears Err then.
func TestReview9WatcherReportsLossAndResubscription(t *testing.T) {
	set := redistest.StartSentinelsTB(t, redistest.SentinelOptions{Shards: 1, Sentinels: 1})
	c, err := sentinel.New("master-0", set.Addrs(), sentinel.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var back []string
	w := c.WatchAllWith(sentinel.WatchHandlers{
		Resubscribed: func(s string) {
			mu.Lock()
			back = append(back, s)
			mu.Unlock()
		},
	})
	defer w.Close()
	resubscribed := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), back...)
	}
	waitFor(t, 10*time.Second, func() bool { return w.Connected() == 1 })
	if err := w.Err(); err != nil {
		t.Fatalf("Err while subscribed: %v", err)
	}
	if b := resubscribed(); len(b) != 0 {
		t.Fatalf("Resubscribed for the first subscription: %v", b)
	}

	s := set.Sentinels[0]
	if err := s.Kill(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, func() bool { return w.Connected() == 0 && w.Err() != nil })
	var qe *sentinel.QueryError
	if err := w.Err(); !errors.As(err, &qe) || qe.Addr != s.Addr {
		t.Fatalf("Err = %v, want a *QueryError for %s", err, s.Addr)
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, func() bool { return w.Connected() == 1 && len(resubscribed()) > 0 })
	if b := resubscribed(); len(b) != 1 || b[0] != s.Addr {
		t.Fatalf("Resubscribed calls %v, want one for %s", b, s.Addr)
	}
	if err := w.Err(); err != nil {
		t.Fatalf("Err once subscribed again: %v", err)
	}
}
