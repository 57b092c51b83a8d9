package pool

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
)

// TestReview7SetClientNameBoundedByCtxOnHungServer: SetClientName renames
// the idle connections under the caller's ctx, but a second call waited
// for the first to finish (a lock held for the whole renaming): with the
// server hung and a first call under a long context, a second call with a
// short one waited for the first, one rename timeout per idle connection,
// far beyond its own context. It must return once its context ends, with
// an error matching the context's, the new name set (new connections and
// the borrow check use it).
func TestReview7SetClientNameBoundedByCtxOnHungServer(t *testing.T) {
	rs := redistest.StartTB(t, redistest.Options{})
	t.Cleanup(func() { _ = rs.Resume() }) // before the server's own cleanup stops it
	set := newTestSet(t, Options{ClientName: "review7-a", MaxIdle: 8, ReadTimeout: time.Second})
	bg := context.Background()

	const idle = 4
	conns := make([]redis.Conn, 0, idle)
	for range idle {
		c, err := set.Get(bg, rs.Addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	for _, c := range conns {
		c.Close()
	}
	if err := rs.Pause(); err != nil {
		t.Fatal(err)
	}

	// A first call under a long context: each idle connection's rename
	// waits its timeout (ReadTimeout, 1 s) on the hung server.
	firstCtx, cancelFirst := context.WithTimeout(bg, 20*time.Second)
	defer cancelFirst()
	first := make(chan error, 1)
	go func() { first <- set.SetClientName(firstCtx, "review7-b") }()
	deadline := time.Now().Add(10 * time.Second)
	for set.ClientName() != "review7-b" {
		if time.Now().After(deadline) {
			t.Fatal("the first SetClientName never set its name")
		}
		time.Sleep(time.Millisecond)
	}

	const wait = 300 * time.Millisecond
	ctx, cancel := context.WithTimeout(bg, wait)
	defer cancel()
	start := time.Now()
	err := set.SetClientName(ctx, "review7-c")
	took := time.Since(start)
	if took > wait+700*time.Millisecond {
		t.Errorf("SetClientName with a %v context on a hung server returned after %v", wait, took)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("SetClientName = %v, want an error matching context.DeadlineExceeded", err)
	}
	if got := set.ClientName(); got != "review7-c" {
		t.Errorf("ClientName after the second call = %q, want review7-c", got)
	}

	cancelFirst()
	if err := rs.Resume(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-first:
	case <-time.After(10 * time.Second):
		t.Fatal("the first SetClientName never returned")
	}
}
