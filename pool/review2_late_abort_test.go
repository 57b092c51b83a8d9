package pool

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
)

// lateCtx is a context whose AfterFunc callbacks the test runs itself
// (context.AfterFunc uses a context's own AfterFunc method), so that a
// callback can be made to run after its caller gave the connection back,
// as one that a context ending at that moment starts too late.
type lateCtx struct {
	context.Context // Background: Value and Deadline
	done            chan struct{}
	fns             []func()
	ended           bool // Err says Canceled (set before a callback runs)
}

func (c *lateCtx) Done() <-chan struct{} { return c.done }
func (c *lateCtx) Err() error {
	if c.ended {
		return context.Canceled
	}
	return nil
}

func (c *lateCtx) AfterFunc(f func()) func() bool {
	c.fns = append(c.fns, f)
	return func() bool { return true }
}

// TestReview2LateAbortSparesTheNextCaller checks that the abort of an
// earlier borrow of a connection, or a context callback of one, that runs
// after the connection went back to the pool and out again does not close
// the socket under the caller who has it now (whose command would then
// fail, perhaps after it was written).
func TestReview2LateAbortSparesTheNextCaller(t *testing.T) {
	srv := plainServer(t)
	bg := context.Background()
	tests := []struct {
		name  string
		first func(t *testing.T, s *Set) (redis.Conn, func())
	}{
		{"GetAbortable's abort", func(t *testing.T, s *Set) (redis.Conn, func()) {
			c, abort, err := s.GetAbortable(bg, srv.Addr, false)
			if err != nil {
				t.Fatal(err)
			}
			return c, abort
		}},
		{"a DoContext's context callback", func(t *testing.T, s *Set) (redis.Conn, func()) {
			slot := &liveSlot{}
			c, err := s.get(context.WithValue(bg, liveSlotKey{}, slot), srv.Addr, false)
			if err != nil {
				t.Fatal(err)
			}
			if slot.lc == nil {
				t.Fatal("no liveConn borrowed")
			}
			// What DoContext does, with the callback started before
			// its stop (the context ended as the reply came): stop is
			// not called, and the callback runs once the connection is
			// someone else's.
			ctx := &lateCtx{Context: bg, done: make(chan struct{})}
			_ = slot.lc.watch(ctx)
			if len(ctx.fns) != 1 {
				t.Fatalf("%d callbacks registered, want 1", len(ctx.fns))
			}
			return c, func() { ctx.ended = true; ctx.fns[0]() }
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestSet(t, Options{})
			first, late := tt.first(t, s)
			id1, err := redis.Int64(first.Do("CLIENT", "ID"))
			if err != nil {
				t.Fatal(err)
			}
			if err := first.Close(); err != nil {
				t.Fatal(err)
			}
			next, err := s.Get(bg, srv.Addr)
			if err != nil {
				t.Fatal(err)
			}
			defer next.Close()
			id2, err := redis.Int64(next.Do("CLIENT", "ID"))
			if err != nil || id2 != id1 {
				t.Fatalf("the next borrow has connection %d (%v), want the same one, %d", id2, err, id1)
			}
			g := runtime.NumGoroutine()
			late()
			// The context package runs an AfterFunc callback on a
			// goroutine of its own: wait until it has ended.
			for end := time.Now().Add(5 * time.Second); runtime.NumGoroutine() > g && time.Now().Before(end); {
				runtime.Gosched()
			}
			if _, err := next.Do("SET", "late", "1"); err != nil {
				t.Fatalf("the next caller's command failed after an earlier borrow's late abort: %v", err)
			}
		})
	}
}
