package pool

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
)

// hookCtx is a context whose first Err call runs hook: SetClientName's
// renaming asks it after counting the idle connections and before
// borrowing one, so the hook can take that connection first, as a
// concurrent caller may.
type hookCtx struct {
	context.Context
	once sync.Once
	hook func()
}

func (c *hookCtx) Err() error {
	c.once.Do(c.hook)
	return c.Context.Err()
}

// TestReview11RenameIdleTakenMeanwhileDials: SetClientName counts the
// idle connections, then borrows them; one that another caller took in
// between made the borrow dial a new connection (Dials 1 -> 2, two
// connections on the server) just to rename it. Renaming now only takes
// connections that are idle: it never dials.
func TestReview11RenameIdleTakenMeanwhileDials(t *testing.T) {
	srv := plainServer(t)
	set := newTestSet(t, Options{ClientName: "app-a", MaxIdle: 8})
	c, err := set.Get(context.Background(), srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	c.Close() // one idle connection
	base, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var taken redis.Conn
	var takeErr error
	ctx := &hookCtx{Context: base, hook: func() { taken, takeErr = set.Get(context.Background(), srv.Addr) }}
	if err := set.SetClientName(ctx, "app-b"); err != nil {
		t.Fatalf("SetClientName: %v", err)
	}
	if takeErr != nil || taken == nil {
		t.Fatalf("the concurrent Get: %v", takeErr)
	}
	if st := set.Stats()[srv.Addr]; st.Dials != 1 || st.Active != 1 {
		t.Errorf("Dials %d, Active %d; want 1 and 1: renaming dialed a connection", st.Dials, st.Active)
	}
	// The other caller's borrow renamed the connection it took.
	if got := serverNames(t, srv); got["app-b"] != 1 || len(got) != 1 {
		t.Errorf("CLIENT LIST names %v, want the borrowed connection alone, app-b", got)
	}
	taken.Close()
}

// TestReview11RenameIdleTakenMeanwhileWaits: with MaxActive 1 and Wait,
// the idle connection taken by another caller between the count and the
// borrow made SetClientName wait for it to come back: the whole context
// (2 s here; a blocking command can hold it for ever), then fail with
// the context's error. Now it returns at once: the other caller's borrow
// renamed the connection it took.
func TestReview11RenameIdleTakenMeanwhileWaits(t *testing.T) {
	srv := plainServer(t)
	set := newTestSet(t, Options{ClientName: "app-a", MaxIdle: 8, MaxActive: 1, Wait: true})
	c, err := set.Get(context.Background(), srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	base, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var taken redis.Conn
	var takeErr error
	ctx := &hookCtx{Context: base, hook: func() { taken, takeErr = set.Get(context.Background(), srv.Addr) }}
	start := time.Now()
	err = set.SetClientName(ctx, "app-b")
	elapsed := time.Since(start)
	if takeErr != nil || taken == nil {
		t.Fatalf("the concurrent Get: %v", takeErr)
	}
	if err != nil || elapsed > time.Second {
		t.Errorf("SetClientName = %v after %v; want nil at once, not a wait for the borrowed connection", err, elapsed)
	}
	if st := set.Stats()[srv.Addr]; st.Dials != 1 {
		t.Errorf("Dials %d, want 1", st.Dials)
	}
	if got := serverNames(t, srv); got["app-b"] != 1 || len(got) != 1 {
		t.Errorf("CLIENT LIST names %v, want the borrowed connection alone, app-b", got)
	}
	taken.Close()
}

// TestReview11RenameIdleDroppedDoesNotRedial: an idle connection that the
// server closed is dropped by the borrow that would rename it; the borrow
// then dialed a new connection in its place (Dials 1 -> 2) although
// nothing was idle any more. Renaming now dials nothing; the next Get
// dials, under the new name.
func TestReview11RenameIdleDroppedDoesNotRedial(t *testing.T) {
	srv := plainServer(t)
	set := newTestSet(t, Options{ClientName: "app-a", MaxIdle: 8})
	c, err := set.Get(context.Background(), srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	admin := adminConn(t, srv)
	defer admin.Close()
	if n, err := redis.Int(admin.Do("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")); err != nil || n != 1 {
		t.Fatalf("CLIENT KILL = %d, %v; want 1 (the idle connection)", n, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := set.SetClientName(ctx, "app-b"); err != nil {
		t.Fatalf("SetClientName: %v", err)
	}
	if st := set.Stats()[srv.Addr]; st.Dials != 1 || st.Active != 0 {
		t.Errorf("Dials %d, Active %d; want 1 and 0: renaming dialed a connection", st.Dials, st.Active)
	}
	if got := serverNames(t, srv); len(got) != 0 {
		t.Errorf("CLIENT LIST names %v, want none", got)
	}
	c, err = set.Get(ctx, srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if name, err := redis.String(c.Do("CLIENT", "GETNAME")); err != nil || name != "app-b" {
		t.Errorf("the next connection's name = %q, %v; want app-b", name, err)
	}
}

// TestReview11RenameIdleWithWaitRenamesEvery: under MaxActive and Wait,
// renaming that takes idle connections only still renames every idle
// one, with no dial, name after name.
func TestReview11RenameIdleWithWaitRenamesEvery(t *testing.T) {
	srv := plainServer(t)
	set := newTestSet(t, Options{ClientName: "app-0", MaxIdle: 8, MaxActive: 3, Wait: true})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var conns []redis.Conn
	for range 3 {
		c, err := set.Get(ctx, srv.Addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	for _, c := range conns {
		c.Close()
	}
	for i := 1; i <= 20; i++ {
		name := fmt.Sprintf("app-%d", i)
		if err := set.SetClientName(ctx, name); err != nil {
			t.Fatalf("SetClientName(%s): %v", name, err)
		}
		if got := serverNames(t, srv); got[name] != 3 || len(got) != 1 {
			t.Fatalf("after SetClientName(%s): CLIENT LIST names %v, want 3 %s", name, got, name)
		}
	}
	if st := set.Stats()[srv.Addr]; st.Dials != 3 || st.Idle != 3 {
		t.Errorf("Dials %d, Idle %d; want 3 and 3", st.Dials, st.Idle)
	}
}
