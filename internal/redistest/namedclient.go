package redistest

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// LeaveAfterTB opens a connection to the server named name (CLIENT
// SETNAME), as a client process shows itself to the server, and closes it
// hold after GET key, polled every 10 ms on a second connection, first
// returns a value that ready accepts (nil when the key is missing:
// ready("")). It stands for a process that acknowledges a marker by
// going away once it has finished what it was doing. The returned channel
// receives the error of closing the named connection, or the error that
// stopped the polling. Both connections are closed, and the polling
// stops, when the test ends at the latest. Connections, their failures
// and the test's end are handled as in StartTB.
func (s *Server) LeaveAfterTB(tb testing.TB, name, key string, ready func(value string) bool, hold time.Duration) <-chan error {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	named, err := s.dial(ctx)
	if err != nil {
		cancel()
		tb.Fatalf("dial %s: %v", s.Addr, err)
	}
	if _, err := named.do(ctx, "CLIENT", "SETNAME", name); err != nil {
		named.close()
		cancel()
		tb.Fatalf("CLIENT SETNAME %s: %v", name, err)
	}
	watch, err := s.dial(ctx)
	if err != nil {
		named.close()
		cancel()
		tb.Fatalf("dial %s: %v", s.Addr, err)
	}
	left := make(chan error, 1)
	done := make(chan struct{})
	tb.Cleanup(func() {
		cancel()
		<-done
		named.close()
	})
	go func() {
		defer close(done)
		defer watch.close()
		for {
			v, err := watch.do(ctx, "GET", key)
			if err != nil {
				left <- fmt.Errorf("GET %s: %w", key, err)
				return
			}
			if val, _ := v.(string); ready(val) {
				break
			}
			select {
			case <-ctx.Done():
				left <- ctx.Err()
				return
			case <-time.After(10 * time.Millisecond): // polling the key
			}
		}
		select {
		case <-ctx.Done():
			left <- ctx.Err()
		case <-time.After(hold): // the process finishing its work: what is simulated
			left <- named.close()
		}
	}()
	return left
}
