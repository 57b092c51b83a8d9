package pool

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
)

// TestReview5NegativeTimeoutTimesOutAtOnce: redigo reads a negative read
// timeout as a deadline already past (it sets now+timeout), so
// redis.DoWithTimeout(c, time.Until(deadline), ...) with a deadline that
// has just passed times out at once. The pooled connections promise
// redigo's semantics, but took a negative timeout for "no timeout": such
// a call on a blocking command (BLPOP ... 0) waited forever. Both
// DoWithTimeout and ReceiveWithTimeout must fail with a timeout at once,
// and the connection must not be handed out again.
func TestReview5NegativeTimeoutTimesOutAtOnce(t *testing.T) {
	srv := plainServer(t)
	admin := adminConn(t, srv)
	set := newTestSet(t, Options{ReadTimeout: time.Minute})
	ctx := context.Background()

	steps := []struct {
		name string
		run  func(c redis.Conn) error
	}{
		{"DoWithTimeout", func(c redis.Conn) error {
			_, err := redis.DoWithTimeout(c, -time.Millisecond, "BLPOP", "review5:never", 0)
			return err
		}},
		{"ReceiveWithTimeout", func(c redis.Conn) error {
			if err := c.Send("BLPOP", "review5:never", 0); err != nil {
				return err
			}
			if err := c.Flush(); err != nil {
				return err
			}
			_, err := redis.ReceiveWithTimeout(c, -time.Millisecond)
			return err
		}},
	}
	for _, step := range steps {
		c, err := set.Get(ctx, srv.Addr)
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- step.run(c) }()
		select {
		case err = <-done:
		case <-time.After(10 * time.Second):
			// Unblock the BLPOP so that the goroutine ends, then fail.
			if _, err := admin.Do("LPUSH", "review5:never", "x"); err != nil {
				t.Errorf("LPUSH: %v", err)
			}
			<-done
			c.Close()
			t.Fatalf("%s with a negative timeout waited for the reply (10s and more) instead of timing out at once", step.name)
		}
		c.Close()
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Errorf("%s with a negative timeout = %v, want a timeout", step.name, err)
		}
	}
	if st := set.Stats()[srv.Addr]; st.Idle != 0 {
		t.Errorf("%d idle connections: a connection that timed out mid-reply went back to the pool", st.Idle)
	}
}
