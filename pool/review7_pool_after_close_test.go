package pool

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/gomodule/redigo/redis"
)

// TestReview7PoolAfterClose: a redigo pool taken from Pool or
// ReadOnlyPool before the Set is closed (a caller that keeps it, or one
// that raced with Close) must, after Close, fail every borrow with
// ErrClosed. redigo's own closed pool answers "redigo: get on closed
// pool", which matches nothing, and with Wait and MaxActive it panics
// ("send on closed channel") about every other time a GetContext whose
// context has ended finds it closed.
func TestReview7PoolAfterClose(t *testing.T) {
	srv := plainServer(t)
	tests := []struct {
		name string
		opts Options
	}{
		{"no limit", Options{}},
		{"Wait with MaxActive", Options{MaxActive: 2, Wait: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := newTestSet(t, tt.opts)
			pools := map[string]*redis.Pool{"Pool": set.Pool(srv.Addr), "ReadOnlyPool": set.ReadOnlyPool(srv.Addr)}
			// Used once before Close, as a caller would.
			c := pools["Pool"].Get()
			if _, err := c.Do("PING"); err != nil {
				t.Fatalf("PING before Close: %v", err)
			}
			c.Close()
			if st := set.Stats()[srv.Addr]; st.Active != 1 || st.Idle != 1 {
				t.Fatalf("after the connection went back: Set.Stats = %+v, want it idle in the Set", st)
			}
			if err := set.Close(); err != nil {
				t.Fatal(err)
			}
			ended, cancel := context.WithCancel(context.Background())
			cancel()
			for name, p := range pools {
				if _, err := p.Get().Do("PING"); !errors.Is(err, ErrClosed) {
					t.Errorf("%s after Close: Get().Do = %v, want ErrClosed", name, err)
				}
				if _, err := p.GetContext(context.Background()); !errors.Is(err, ErrClosed) {
					t.Errorf("%s after Close: GetContext = %v, want ErrClosed", name, err)
				}
				for i := range 50 {
					err := review7GetNoPanic(p, ended)
					if err == nil || !errors.Is(err, ErrClosed) && !errors.Is(err, context.Canceled) {
						t.Fatalf("%s after Close: GetContext with an ended context (try %d) = %v, want ErrClosed or context.Canceled", name, i, err)
					}
				}
			}
		})
	}
}

// review7GetNoPanic is p.GetContext(ctx) with a panic turned into an
// error; a connection it gets is closed and reported as an error.
func review7GetNoPanic(p *redis.Pool, ctx context.Context) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("GetContext panicked: %v", r)
		}
	}()
	c, err := p.GetContext(ctx)
	if err == nil {
		c.Close()
		return errors.New("GetContext succeeded")
	}
	return err
}

// TestReview7PoolAcrossRemove: a pool taken from Pool before Remove keeps
// lending connections afterwards, as Set.Get does, instead of failing
// with redigo's error for a closed pool.
func TestReview7PoolAcrossRemove(t *testing.T) {
	srv := plainServer(t)
	set := newTestSet(t, Options{MaxActive: 1, Wait: true})
	p := set.Pool(srv.Addr)
	if err := set.Remove(srv.Addr); err != nil {
		t.Fatal(err)
	}
	c := p.Get()
	defer c.Close()
	if got, err := redis.String(c.Do("PING")); err != nil || got != "PONG" {
		t.Fatalf("PING through a pool taken before Remove = %q, %v; want PONG", got, err)
	}
}
