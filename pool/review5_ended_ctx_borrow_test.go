package pool

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
)

// TestReview5EndedContextKeepsIdleConns: the borrow check PINGs every idle
// connection that has been idle for longer than TestOnBorrow, under the
// caller's context. When that context's deadline passes during the first
// PING (a slow server), redigo's pool goes on to test every other idle
// connection with the same, now ended, context: each PING fails at once
// without being sent ("nothing sent") and the pool closed a healthy
// connection for it, then dialed under the ended context too. One Get
// with a short deadline on a slow server emptied the whole idle pool.
// Only the connection whose PING was cut short may be lost; the Get fails
// with the context's error.
func TestReview5EndedContextKeepsIdleConns(t *testing.T) {
	const idle = 5
	srv := plainServer(t)
	admin := adminConn(t, srv, redis.DialReadTimeout(30*time.Second))
	set := newTestSet(t, Options{TestOnBorrow: time.Nanosecond, ReadTimeout: 10 * time.Second})

	conns := make([]redis.Conn, 0, idle)
	for range idle {
		c, err := set.Get(context.Background(), srv.Addr)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Do("PING"); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	for _, c := range conns {
		c.Close()
	}
	if st := set.Stats()[srv.Addr]; st.Idle != idle || st.Dials != idle {
		t.Fatalf("Stats = %+v, want %d idle connections from %d dials", st, idle, idle)
	}

	// The server answers nothing for 3s; the Get gives up after 200ms.
	if _, err := admin.Do("CLIENT", "PAUSE", 3000, "ALL"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	c, err := set.Get(ctx, srv.Addr)
	cancel()
	if err == nil {
		c.Close()
	}
	// Wait for the pause to end: the admin connection's PING waits too.
	if _, err := admin.Do("PING"); err != nil {
		t.Fatal(err)
	}
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Get = %v, want the context's error", err)
	}
	st := set.Stats()[srv.Addr]
	if st.Idle < idle-1 {
		t.Errorf("after one Get whose deadline passed during a PING: %d idle connections left of %d (Stats %+v): healthy connections were closed", st.Idle, idle, st)
	}
	if st.Dials != idle {
		t.Errorf("Stats = %+v: %d dials, want %d (no dial under an ended context)", st, st.Dials, idle)
	}
	// The connections kept work.
	c, err = set.Get(context.Background(), srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Do("PING"); err != nil {
		t.Errorf("PING on a kept connection: %v", err)
	}
}

// TestReview5EndedContextDoesNotWaitForARename: idle connections that still
// carry an old name (SetClientName cut short by its context) are renamed
// when borrowed. A Get whose context has ended cannot rename them; giving
// one back instead would rename it on the way back, a round trip on a slow
// server that the caller, whose deadline has passed, would wait for. The
// Get must return about when its deadline passes.
func TestReview5EndedContextDoesNotWaitForARename(t *testing.T) {
	const idle = 3
	srv := plainServer(t)
	admin := adminConn(t, srv, redis.DialReadTimeout(30*time.Second))
	set := newTestSet(t, Options{ClientName: "old", ReadTimeout: 10 * time.Second})

	conns := make([]redis.Conn, 0, idle)
	for range idle {
		c, err := set.Get(context.Background(), srv.Addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	for _, c := range conns {
		c.Close()
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if err := set.SetClientName(cancelled, "new"); !errors.Is(err, context.Canceled) {
		t.Fatalf("SetClientName under a cancelled context = %v, want context.Canceled (idle connections left under the old name)", err)
	}
	if st := set.Stats()[srv.Addr]; st.Idle != idle {
		t.Fatalf("Stats = %+v, want %d idle connections", st, idle)
	}

	if _, err := admin.Do("CLIENT", "PAUSE", 3000, "ALL"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	start := time.Now()
	c, err := set.Get(ctx, srv.Addr)
	took := time.Since(start)
	cancel()
	if err == nil {
		c.Close()
	}
	if _, err := admin.Do("PING"); err != nil { // the pause is over
		t.Fatal(err)
	}
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Get = %v, want the context's error", err)
	}
	if took > 1500*time.Millisecond {
		t.Errorf("Get with a 200ms deadline took %v: it waited for the paused server", took)
	}
}
