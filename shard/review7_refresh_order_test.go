package shard

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
)

// staleRefreshSetup starts a simulated three-master cluster whose next
// topology answer is held (and will be the topology of now, "before"),
// and returns the client, the server, the topology slot 0 moves to
// ("after") and the hold to release.
func staleRefreshSetup(t *testing.T) (*Client, *topologyServer, *bigTopology, chan struct{}) {
	t.Helper()
	srv := startTopologyServer(t)
	before := newBigTopology(3, 0, srv.addr())
	srv.set(before)
	c := newScaleClient(t, srv)
	if got := c.cl().Table().Master(0).Addr; got != srv.addr() {
		t.Fatalf("slot 0 at %s before the move, want %s", got, srv.addr())
	}
	hold := make(chan struct{})
	t.Cleanup(func() {
		select {
		case <-hold:
		default:
			close(hold)
		}
	})
	srv.hold.Store(&hold)
	after := newBigTopology(3, 0, srv.addr())
	after.owner[0] = 1
	return c, srv, after, hold
}

// waitFor polls cond every few milliseconds for up to d.
func waitFor(d time.Duration, cond func() bool) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// A MOVED that arrives while a refresh is in flight, its query already
// answered by the old topology, was dropped: the refresh then installed
// its stale answer over the MOVED's patch and nothing looked again, so
// slot 0 went back to its old owner until the next periodic refresh
// (never, here) or the next redirect.
func TestReview7MovedDuringRefreshIsNotUndone(t *testing.T) {
	c, srv, after, hold := staleRefreshSetup(t)
	ctx := context.Background()
	q0, r0 := srv.queries.Load(), c.refr.count.Load()
	c.refresh(ctx, false)
	if !waitFor(10*time.Second, func() bool { return srv.queries.Load() > q0 }) {
		t.Fatal("the refresh never asked for the topology")
	}
	srv.set(after) // the held answer is the old topology
	owner := after.addr(1, -1)
	cl := &call{name: "GET", node: int(c.cl().state.Load().master[0]), group: 0,
		err: redis.Error(fmt.Sprintf("MOVED 0 %s", owner))}
	v, refresh := c.judge(cl)
	if v != retryNow || !refresh {
		t.Fatalf("MOVED judged %v (refresh %v), want retryNow and a refresh", v, refresh)
	}
	c.refresh(ctx, false)
	if got := c.cl().Table().Master(0).Addr; got != owner {
		t.Fatalf("slot 0 at %s after the MOVED, want %s", got, owner)
	}
	close(hold)
	if !waitFor(10*time.Second, func() bool { return c.refr.count.Load() > r0 }) {
		t.Fatal("the held refresh never ended")
	}
	if !waitFor(3*time.Second, func() bool { return c.cl().Table().Master(0).Addr == owner }) {
		t.Fatalf("slot 0 at %s after the stale refresh ended, want %s (the MOVED's owner, which the cluster now reports)",
			c.cl().Table().Master(0).Addr, owner)
	}
}

// Client.Refresh ran its own discovery beside a background refresh; the
// one asked first but answered last installed its older table over the
// newer one.
func TestReview7OlderRefreshAnswerDoesNotReplaceNewer(t *testing.T) {
	c, srv, after, hold := staleRefreshSetup(t)
	ctx := context.Background()
	q0, r0 := srv.queries.Load(), c.refr.count.Load()
	c.refresh(ctx, false) // in the background; its answer is held
	if !waitFor(10*time.Second, func() bool { return srv.queries.Load() > q0 }) {
		t.Fatal("the background refresh never asked for the topology")
	}
	srv.set(after)
	if err := c.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	owner := after.addr(1, -1)
	if got := c.cl().Table().Master(0).Addr; got != owner {
		t.Fatalf("slot 0 at %s after Refresh, want %s", got, owner)
	}
	close(hold)
	// Refresh counted itself: the background one is the second.
	if !waitFor(10*time.Second, func() bool { return c.refr.count.Load() >= r0+2 }) {
		t.Fatal("the held refresh never ended")
	}
	if got := c.cl().Table().Master(0).Addr; got != owner {
		t.Fatalf("slot 0 at %s once the older answer came in, want %s (the newer answer's)", got, owner)
	}
}
