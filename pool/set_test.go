package pool

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
)

func newTestSet(t *testing.T, opts Options) *Set {
	t.Helper()
	set, err := NewSet(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { set.Close() })
	return set
}

func TestGetDoReturnsConnToPool(t *testing.T) {
	srv := plainServer(t)
	set := newTestSet(t, Options{})
	ctx := context.Background()

	for i := range 3 {
		c, err := set.Get(ctx, srv.Addr)
		if err != nil {
			t.Fatal(err)
		}
		n, err := redis.Int(c.Do("INCR", "counter"))
		if err != nil || n != i+1 {
			t.Fatalf("INCR = %d, %v; want %d", n, err, i+1)
		}
		if st := set.Stats()[srv.Addr]; st.Active != 1 || st.Idle != 0 {
			t.Errorf("while borrowed: Stats = %+v, want Active 1 Idle 0", st)
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		if st := set.Stats()[srv.Addr]; st.Active != 1 || st.Idle != 1 || st.Dials != 1 || st.DialErrors != 0 {
			t.Errorf("after Close: Stats = %+v, want Active 1 Idle 1 Dials 1 (the conn is reused)", st)
		}
	}
	if got := set.Addrs(); len(got) != 1 || got[0] != srv.Addr {
		t.Errorf("Addrs() = %v, want [%s]", got, srv.Addr)
	}
}

func TestOnePoolPerAddr(t *testing.T) {
	a, b := plainServer(t), plainServer(t)
	set := newTestSet(t, Options{})
	ctx := context.Background()
	for _, srv := range []*testServer{a, b} {
		c, err := set.Get(ctx, srv.Addr)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Do("SET", "owner", srv.Addr); err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
	for _, srv := range []*testServer{a, b} {
		got, err := redis.String(adminConn(t, srv).Do("GET", "owner"))
		if err != nil || got != srv.Addr {
			t.Errorf("GET owner on %s = %q, %v; want its own address", srv.Addr, got, err)
		}
		if first, again := set.Pool(srv.Addr), set.Pool(srv.Addr); first != again {
			t.Error("Pool returns a new pool for a known address")
		}
	}
	if set.Pool(a.Addr) == set.Pool(b.Addr) {
		t.Error("two addresses share a pool")
	}
	want := []string{a.Addr, b.Addr}
	if want[0] > want[1] {
		want[0], want[1] = want[1], want[0]
	}
	if got := set.Addrs(); len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("Addrs() = %v, want sorted %v", got, want)
	}
}

func TestWaitHonoursContext(t *testing.T) {
	srv := plainServer(t)
	set := newTestSet(t, Options{MaxActive: 1, Wait: true})

	held, err := set.Get(context.Background(), srv.Addr)
	if err != nil {
		t.Fatal(err)
	}

	// Deadline: Get gives up when the context does, with its error.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	c, err := set.Get(ctx, srv.Addr)
	if elapsed := time.Since(start); elapsed < 90*time.Millisecond || elapsed > 2*time.Second {
		t.Errorf("Get returned after %v, want about 100ms", elapsed)
	}
	if c != nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Get = %v, %v; want nil, context.DeadlineExceeded", c, err)
	}

	// Cancel: same, with context.Canceled.
	ctx2, cancel2 := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := set.Get(ctx2, srv.Addr)
		errc <- err
	}()
	time.Sleep(50 * time.Millisecond)
	cancel2()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Get after cancel = %v, want context.Canceled", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Get did not return after its context was cancelled")
	}

	// A waiter gets the connection as soon as it comes back.
	got := make(chan error, 1)
	go func() {
		c, err := set.Get(context.Background(), srv.Addr)
		if err == nil {
			_, err = c.Do("PING")
			c.Close()
		}
		got <- err
	}()
	time.Sleep(50 * time.Millisecond)
	held.Close()
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("waiting Get was not served when the connection came back")
	}
	if st := set.Stats()[srv.Addr]; st.WaitCount < 1 || st.WaitDuration <= 0 || st.Active != 1 {
		t.Errorf("Stats = %+v, want WaitCount >= 1, WaitDuration > 0, Active 1", st)
	}
}

func TestExhaustedWithoutWait(t *testing.T) {
	srv := plainServer(t)
	set := newTestSet(t, Options{MaxActive: 2})
	ctx := context.Background()
	var held []redis.Conn
	for range 2 {
		c, err := set.Get(ctx, srv.Addr)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	c, err := set.Get(ctx, srv.Addr)
	if c != nil || !errors.Is(err, redis.ErrPoolExhausted) {
		t.Fatalf("third Get = %v, %v; want nil, redis.ErrPoolExhausted", c, err)
	}
	if !strings.HasPrefix(err.Error(), "shardis: ") || !strings.Contains(err.Error(), srv.Addr) {
		t.Errorf("error %q should start with \"shardis: \" and name the address", err)
	}
	held[0].Close()
	c, err = set.Get(ctx, srv.Addr)
	if err != nil {
		t.Fatalf("Get after a return = %v", err)
	}
	c.Close()
	held[1].Close()
}

func TestSelectDB(t *testing.T) {
	srv := plainServer(t)
	set := newTestSet(t, Options{DB: 2})
	c, err := set.Get(context.Background(), srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Do("SET", "in-db-2", "yes"); err != nil {
		t.Fatal(err)
	}
	c.Close()

	admin := adminConn(t, srv)
	if n, err := redis.Int(admin.Do("EXISTS", "in-db-2")); err != nil || n != 0 {
		t.Errorf("EXISTS in DB 0 = %d, %v; want 0", n, err)
	}
	if _, err := admin.Do("SELECT", 2); err != nil {
		t.Fatal(err)
	}
	if v, err := redis.String(admin.Do("GET", "in-db-2")); err != nil || v != "yes" {
		t.Errorf("GET in DB 2 = %q, %v; want yes", v, err)
	}
}

func TestSelectOutOfRangeIsDialError(t *testing.T) {
	srv := plainServer(t, "--databases", "4")
	set := newTestSet(t, Options{DB: 9})
	_, err := set.Get(context.Background(), srv.Addr)
	var de *DialError
	if !errors.As(err, &de) || de.Addr != srv.Addr || !strings.Contains(err.Error(), "SELECT") {
		t.Fatalf("Get = %v, want a *DialError for %s about SELECT", err, srv.Addr)
	}
	var reply redis.Error
	if !errors.As(err, &reply) {
		t.Errorf("the server's reply should stay a redis.Error inside the DialError: %v", err)
	}
	if st := set.Stats()[srv.Addr]; st.Dials != 1 || st.DialErrors != 1 || st.Active != 0 {
		t.Errorf("Stats = %+v, want Dials 1 DialErrors 1 Active 0", st)
	}
}

func TestClientName(t *testing.T) {
	srv := plainServer(t)
	set := newTestSet(t, Options{ClientName: "shardis-test-7"})
	c, err := set.Get(context.Background(), srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	list, err := redis.String(adminConn(t, srv).Do("CLIENT", "LIST"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(list, " name=shardis-test-7 ") {
		t.Errorf("CLIENT LIST does not show the name:\n%s", list)
	}
}

func TestTestOnBorrowReplacesKilledConns(t *testing.T) {
	tests := []struct {
		name         string
		testOnBorrow time.Duration
		wantDoErr    bool // the command on the killed connection fails
	}{
		// The server's close is seen without a round trip whatever
		// TestOnBorrow says: the pool peeks at the socket of every
		// connection it hands out.
		{"ping every idle conn", time.Nanosecond, false},
		{"never ping", Never, false},
		{"idle less than TestOnBorrow", time.Hour, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := plainServer(t)
			set := newTestSet(t, Options{TestOnBorrow: tt.testOnBorrow})
			ctx := context.Background()
			c, err := set.Get(ctx, srv.Addr)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Do("PING"); err != nil {
				t.Fatal(err)
			}
			c.Close()

			admin := adminConn(t, srv)
			killed, err := redis.Int(admin.Do("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"))
			if err != nil || killed != 1 {
				t.Fatalf("CLIENT KILL = %d, %v; want 1 killed", killed, err)
			}
			// The server closes a killed client's socket after the reply;
			// once CLIENT LIST shows only the admin connection, the close
			// is on its way over loopback to the pooled socket.
			deadline := time.Now().Add(10 * time.Second)
			for {
				list, err := redis.String(admin.Do("CLIENT", "LIST", "TYPE", "normal"))
				if err != nil {
					t.Fatal(err)
				}
				if strings.Count(strings.TrimSpace(list), "\n") == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the killed client is still listed:\n%s", list)
				}
				time.Sleep(5 * time.Millisecond)
			}

			c, err = set.Get(ctx, srv.Addr)
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Do("SET", "k", "v")
			c.Close()
			if gotErr := err != nil; gotErr != tt.wantDoErr {
				t.Fatalf("SET after CLIENT KILL: err = %v, want error %t", err, tt.wantDoErr)
			}
			if !tt.wantDoErr {
				if st := set.Stats()[srv.Addr]; st.Dials != 2 {
					t.Errorf("Stats = %+v, want 2 dials (the dead conn was replaced)", st)
				}
			}
		})
	}
}

func TestMaxConnLifetime(t *testing.T) {
	srv := plainServer(t)
	set := newTestSet(t, Options{MaxConnLifetime: 50 * time.Millisecond})
	ctx := context.Background()
	for range 2 {
		c, err := set.Get(ctx, srv.Addr)
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
		time.Sleep(80 * time.Millisecond)
	}
	if st := set.Stats()[srv.Addr]; st.Dials != 2 {
		t.Errorf("Stats = %+v, want 2 dials (the old conn was retired)", st)
	}
}

func TestCloseIdempotentAndGetAfterClose(t *testing.T) {
	srv := plainServer(t)
	set, err := NewSet(Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	idle, err := set.Get(ctx, srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	idle.Close()
	borrowed, err := set.Get(ctx, srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	_ = borrowed
	idle2, err := set.Get(ctx, srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	idle2.Close()
	pool := set.nodes[srv.Addr].rw.pool // the pool behind Get (Pool lends from it)

	for range 2 {
		if err := set.Close(); err != nil {
			t.Fatalf("Close = %v", err)
		}
	}
	if st := pool.Stats(); st.ActiveCount != 1 || st.IdleCount != 0 {
		t.Errorf("after Close: %+v, want the idle conn closed and the borrowed one still open", st)
	}
	if _, err := borrowed.Do("PING"); err != nil {
		t.Errorf("a conn borrowed before Close should keep working until returned: %v", err)
	}
	borrowed.Close()
	if st := pool.Stats(); st.ActiveCount != 0 {
		t.Errorf("after returning the borrowed conn: %+v, want no conns", st)
	}

	for _, get := range []func(context.Context, string) (redis.Conn, error){set.Get, set.GetReadOnly} {
		if c, err := get(ctx, srv.Addr); c != nil || !errors.Is(err, ErrClosed) {
			t.Errorf("Get after Close = %v, %v; want nil, ErrClosed", c, err)
		}
	}
	if _, err := set.Pool(srv.Addr).Get().Do("PING"); !errors.Is(err, ErrClosed) {
		t.Errorf("Pool(addr) after Close: Do = %v, want ErrClosed", err)
	}
	if err := set.Remove(srv.Addr); !errors.Is(err, ErrClosed) {
		t.Errorf("Remove after Close = %v, want ErrClosed", err)
	}
	if got := set.Addrs(); len(got) != 0 {
		t.Errorf("Addrs after Close = %v, want none", got)
	}
	if got := set.Stats(); len(got) != 0 {
		t.Errorf("Stats after Close = %v, want none", got)
	}
}

func TestCloseWakesWaiters(t *testing.T) {
	srv := plainServer(t)
	set, err := NewSet(Options{MaxActive: 1, Wait: true})
	if err != nil {
		t.Fatal(err)
	}
	held, err := set.Get(context.Background(), srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := set.Get(context.Background(), srv.Addr)
		errc <- err
	}()
	time.Sleep(50 * time.Millisecond)
	set.Close()
	select {
	case err := <-errc:
		if !errors.Is(err, ErrClosed) {
			t.Errorf("waiting Get after Close = %v, want ErrClosed", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Close left a Get waiting")
	}
	held.Close()
}

func TestRemove(t *testing.T) {
	srv := plainServer(t)
	set := newTestSet(t, Options{})
	ctx := context.Background()
	c, err := set.Get(ctx, srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	old := set.nodes[srv.Addr].rw.pool // the pool behind Get (Pool lends from it)
	oldLender := set.Pool(srv.Addr)

	if err := set.Remove(srv.Addr); err != nil {
		t.Fatal(err)
	}
	if err := set.Remove(srv.Addr); err != nil {
		t.Errorf("second Remove = %v, want nil", err)
	}
	if err := set.Remove("127.0.0.1:1"); err != nil {
		t.Errorf("Remove of an unknown address = %v, want nil", err)
	}
	if got := set.Addrs(); len(got) != 0 {
		t.Errorf("Addrs after Remove = %v, want none", got)
	}
	if st := old.Stats(); st.ActiveCount != 0 {
		t.Errorf("removed pool still holds %d conns", st.ActiveCount)
	}
	c, err = set.Get(ctx, srv.Addr)
	if err != nil {
		t.Fatalf("Get after Remove = %v, want a fresh pool", err)
	}
	c.Close()
	if set.nodes[srv.Addr].rw.pool == old || set.Pool(srv.Addr) == oldLender {
		t.Error("Get after Remove reused the closed pool")
	}
	if st := set.Stats()[srv.Addr]; st.Dials != 1 {
		t.Errorf("Stats after Remove = %+v, want counters started again (Dials 1)", st)
	}
}

func TestBadAddr(t *testing.T) {
	set := newTestSet(t, Options{})
	for _, addr := range []string{"", "localhost", ":6379", "127.0.0.1:", "127.0.0.1:0", "127.0.0.1:70000", "127.0.0.1:redis", "[::1"} {
		c, err := set.Get(context.Background(), addr)
		if c != nil || !errors.Is(err, ErrBadAddr) {
			t.Errorf("Get(%q) = %v, %v; want ErrBadAddr", addr, c, err)
		}
		if _, err := set.Pool(addr).Get().Do("PING"); !errors.Is(err, ErrBadAddr) {
			t.Errorf("Pool(%q): Do = %v, want ErrBadAddr", addr, err)
		}
	}
	if got := set.Addrs(); len(got) != 0 {
		t.Errorf("bad addresses got pools: %v", got)
	}
}

func TestPoolDirectUse(t *testing.T) {
	srv := plainServer(t)
	set := newTestSet(t, Options{DB: 1})
	c := set.Pool(srv.Addr).Get()
	defer c.Close()
	if _, err := c.Do("SET", "direct", 1); err != nil {
		t.Fatal(err)
	}
	admin := adminConn(t, srv, redis.DialDatabase(1))
	if n, err := redis.Int(admin.Do("EXISTS", "direct")); err != nil || n != 1 {
		t.Errorf("the pool's conns should be dialed with the Set's options (DB 1): EXISTS = %d, %v", n, err)
	}
	if st := set.Stats()[srv.Addr]; st.Dials != 1 {
		t.Errorf("Stats = %+v, want the direct dial counted", st)
	}
}

func TestGetWithDoneContext(t *testing.T) {
	srv := plainServer(t)
	set := newTestSet(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if c, err := set.Get(ctx, srv.Addr); c != nil || !errors.Is(err, context.Canceled) {
		t.Errorf("Get with a cancelled context = %v, %v; want context.Canceled", c, err)
	}
}

func TestConcurrentUse(t *testing.T) {
	a, b := plainServer(t), plainServer(t)
	set := newTestSet(t, Options{MaxActive: 4, Wait: true})
	ctx := context.Background()
	var wg sync.WaitGroup
	errc := make(chan error, 64)
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				addr := a.Addr
				if (g+i)%2 == 1 {
					addr = b.Addr
				}
				c, err := set.Get(ctx, addr)
				if err != nil {
					errc <- err
					return
				}
				if _, err := c.Do("INCR", "n"); err != nil {
					errc <- err
				}
				c.Close()
				if i%10 == 0 {
					set.Stats()
					set.Addrs()
				}
			}
		}()
	}
	// Topology changes while the others work: Get must survive a Remove.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 10 {
			set.Remove(b.Addr)
			time.Sleep(2 * time.Millisecond)
		}
	}()
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	total := 0
	for _, srv := range []*testServer{a, b} {
		n, err := redis.Int(adminConn(t, srv).Do("GET", "n"))
		if err != nil {
			t.Fatal(err)
		}
		total += n
	}
	if total != 16*50 {
		t.Errorf("INCR count = %d, want %d", total, 16*50)
	}
	if st := set.Stats()[a.Addr]; st.Active > 4 {
		t.Errorf("Stats = %+v, MaxActive 4 exceeded", st)
	}
}
