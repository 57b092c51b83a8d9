package pool

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
)

// TestReview5ContextDeadlineIsTheCause: DoContext and ReceiveContext arm
// the socket's read deadline from the context's deadline, and a callback
// of the context fails the connection when it ends: two clocks for one
// deadline. Whichever won, the caller got either context.DeadlineExceeded
// or a bare "i/o timeout", about half of the time each, so errors.Is(err,
// context.DeadlineExceeded), the way to tell "my deadline passed" from "the
// node was slow" (ReadTimeout), failed at random. When the context's
// deadline is what ended the wait, the error must match
// context.DeadlineExceeded every time (and still be a net timeout).
func TestReview5ContextDeadlineIsTheCause(t *testing.T) {
	srv := plainServer(t)
	set := newTestSet(t, Options{ReadTimeout: 30 * time.Second})
	type ctxConn interface {
		DoContext(context.Context, string, ...any) (any, error)
		ReceiveContext(context.Context) (any, error)
	}
	steps := []struct {
		name string
		run  func(ctx context.Context, c ctxConn) error
	}{
		{"DoContext", func(ctx context.Context, c ctxConn) error {
			_, err := c.DoContext(ctx, "BLPOP", "review5:never", 0)
			return err
		}},
		{"ReceiveContext", func(ctx context.Context, c ctxConn) error {
			if err := c.(redis.Conn).Send("BLPOP", "review5:never", 0); err != nil {
				return err
			}
			if err := c.(redis.Conn).Flush(); err != nil {
				return err
			}
			_, err := c.ReceiveContext(ctx)
			return err
		}},
	}
	for _, step := range steps {
		for i := range 20 {
			c, err := set.Get(context.Background(), srv.Addr)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
			err = step.run(ctx, c.(ctxConn))
			cancel()
			c.Close()
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("%s #%d under a context whose deadline passed = %v, want an error matching context.DeadlineExceeded", step.name, i, err)
			}
			var ne net.Error
			if err != nil && !errors.As(err, &ne) {
				t.Errorf("%s #%d = %v: want a net.Error too", step.name, i, err)
			} else if err != nil && !ne.Timeout() {
				t.Errorf("%s #%d = %v: Timeout() is false", step.name, i, err)
			}
		}
	}
}
