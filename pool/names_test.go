package pool

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
)

// serverNames counts the named connections of CLIENT LIST on srv by
// name, as the server sees them (the admin connection that asks is left
// out).
func serverNames(t *testing.T, srv *testServer) map[string]int {
	t.Helper()
	admin := adminConn(t, srv)
	defer admin.Close()
	if _, err := admin.Do("CLIENT", "SETNAME", "admin"); err != nil {
		t.Fatal(err)
	}
	list, err := redis.String(admin.Do("CLIENT", "LIST"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(list), "\n") {
		for _, f := range strings.Fields(line) {
			if name, ok := strings.CutPrefix(f, "name="); ok && name != "admin" && name != "" {
				got[name]++
			}
		}
	}
	return got
}

func TestSetClientNameRenamesIdleBorrowedAndNewConns(t *testing.T) {
	srv := plainServer(t)
	set := newTestSet(t, Options{ClientName: "app-a", MaxIdle: 8})
	ctx := context.Background()

	var conns []redis.Conn
	for range 3 {
		c, err := set.Get(ctx, srv.Addr)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Do("PING"); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	borrowed := conns[2]
	conns[0].Close()
	conns[1].Close() // two idle, one borrowed
	if got := serverNames(t, srv); got["app-a"] != 3 || len(got) != 1 {
		t.Fatalf("before: CLIENT LIST names %v, want 3 app-a", got)
	}
	if err := set.SetClientName(ctx, "app-b"); err != nil {
		t.Fatal(err)
	}
	if got := set.ClientName(); got != "app-b" {
		t.Errorf("ClientName() = %q, want app-b", got)
	}
	if got := set.Options().ClientName; got != "app-b" {
		t.Errorf("Options().ClientName = %q, want app-b", got)
	}
	// The idle ones are renamed before SetClientName returns; the
	// borrowed one is left alone while its borrower has it.
	if got := serverNames(t, srv); got["app-a"] != 1 || got["app-b"] != 2 || len(got) != 2 {
		t.Errorf("after SetClientName: CLIENT LIST names %v, want 1 app-a (borrowed) and 2 app-b", got)
	}
	if st := set.Stats()[srv.Addr]; st.Dials != 3 {
		t.Errorf("Dials = %d, want 3: idle connections are renamed, not redialed", st.Dials)
	}
	if name, err := redis.String(borrowed.Do("CLIENT", "GETNAME")); err != nil || name != "app-a" {
		t.Errorf("the borrowed connection's name = %q, %v; want app-a while borrowed", name, err)
	}

	// Given back, the borrowed connection is renamed.
	if err := borrowed.Close(); err != nil {
		t.Fatal(err)
	}
	if got := serverNames(t, srv); got["app-b"] != 3 || len(got) != 1 {
		t.Errorf("after the borrowed one came back: CLIENT LIST names %v, want 3 app-b", got)
	}

	// Every connection handed out now carries the new name, and a new
	// one is dialed with it.
	conns = conns[:0]
	for range 4 {
		c, err := set.Get(ctx, srv.Addr)
		if err != nil {
			t.Fatal(err)
		}
		name, err := redis.String(c.Do("CLIENT", "GETNAME"))
		if err != nil || name != "app-b" {
			t.Errorf("handed-out connection's name = %q, %v; want app-b", name, err)
		}
		conns = append(conns, c)
	}
	if st := set.Stats()[srv.Addr]; st.Dials != 4 {
		t.Errorf("Dials = %d, want 4 (one new connection)", st.Dials)
	}
	if got := serverNames(t, srv); got["app-b"] != 4 || len(got) != 1 {
		t.Errorf("CLIENT LIST names %v, want 4 app-b", got)
	}
	for _, c := range conns {
		c.Close()
	}

	// An empty name clears the names.
	if err := set.SetClientName(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if got := serverNames(t, srv); len(got) != 0 {
		t.Errorf("after clearing: CLIENT LIST names %v, want none", got)
	}
}

func TestSetClientNameRefusesBadNames(t *testing.T) {
	set := newTestSet(t, Options{ClientName: "keep"})
	for _, name := range []string{"my app", "app\n", "appé"} {
		err := set.SetClientName(context.Background(), name)
		if !errors.Is(err, ErrBadOptions) {
			t.Errorf("SetClientName(%q) = %v, want ErrBadOptions", name, err)
		}
	}
	if got := set.ClientName(); got != "keep" {
		t.Errorf("ClientName() = %q after refusals, want keep", got)
	}
	set.Close()
	if err := set.SetClientName(context.Background(), "later"); !errors.Is(err, ErrClosed) {
		t.Errorf("after Close: %v, want ErrClosed", err)
	}
}

// A Dial connection keeps its name: a subscription cannot be renamed.
func TestSetClientNameLeavesDialedConnsAlone(t *testing.T) {
	srv := plainServer(t)
	set := newTestSet(t, Options{ClientName: "sub-a"})
	ctx := context.Background()
	conn, err := set.Dial(ctx, srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := set.SetClientName(ctx, "sub-b"); err != nil {
		t.Fatal(err)
	}
	if got := serverNames(t, srv); got["sub-a"] != 1 || len(got) != 1 {
		t.Errorf("CLIENT LIST names %v, want the dialed connection's sub-a", got)
	}
	conn2, err := set.Dial(ctx, srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn2.Close()
	if name, err := redis.String(conn2.Do("CLIENT", "GETNAME")); err != nil || name != "sub-b" {
		t.Errorf("a connection dialed later is named %q, %v; want sub-b", name, err)
	}
}

// Renames while many goroutines borrow and give back: no connection is
// ever handed out under a name older than the one being replaced, and
// once the borrowers stop, one more SetClientName leaves every connection
// under the last name.
func TestSetClientNameUnderLoad(t *testing.T) {
	srv := plainServer(t)
	set := newTestSet(t, Options{ClientName: "gen-0", MaxIdle: 16})
	ctx := context.Background()
	var (
		mu       sync.Mutex
		old, new = "gen-0", "gen-0" // differ while SetClientName runs
		errs     []string
	)
	allowed := func() [2]string {
		mu.Lock()
		defer mu.Unlock()
		return [2]string{old, new}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				before := allowed()
				c, err := set.Get(ctx, srv.Addr)
				if err != nil {
					mu.Lock()
					errs = append(errs, err.Error())
					mu.Unlock()
					return
				}
				name, err := redis.String(c.Do("CLIENT", "GETNAME"))
				c.Close()
				after := allowed()
				// Any name from the one being replaced when the Get began
				// to the newest when the reply came.
				var n, lo, hi int
				_, scanErr := fmt.Sscanf(name, "gen-%d", &n)
				fmt.Sscanf(before[0], "gen-%d", &lo)
				fmt.Sscanf(after[1], "gen-%d", &hi)
				if err != nil || scanErr != nil || n < lo || n > hi {
					mu.Lock()
					errs = append(errs, fmt.Sprintf("handed out as %q (%v); allowed %v then %v", name, err, before, after))
					mu.Unlock()
				}
			}
		}()
	}
	for i := 1; i <= 20; i++ {
		name := fmt.Sprintf("gen-%d", i)
		mu.Lock()
		new = name
		mu.Unlock()
		if err := set.SetClientName(ctx, name); err != nil {
			t.Error(err)
		}
		mu.Lock()
		old = name
		mu.Unlock()
		time.Sleep(5 * time.Millisecond) // let the borrowers run between renames
	}
	close(stop)
	wg.Wait()
	for _, e := range errs {
		t.Error(e)
	}
	if err := set.SetClientName(ctx, "final"); err != nil {
		t.Fatal(err)
	}
	got := serverNames(t, srv)
	if got["final"] == 0 || len(got) != 1 {
		t.Errorf("CLIENT LIST names %v, want every connection named final", got)
	}
}
