package pool

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// review5WaitParked waits until a goroutine is parked in redigo's wait
// for a vacant connection.
func review5WaitParked(t *testing.T) {
	t.Helper()
	buf := make([]byte, 1<<20)
	deadline := time.Now().Add(10 * time.Second)
	for {
		n := runtime.Stack(buf, true)
		if strings.Contains(string(buf[:n]), "waitVacantConn") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no Get ever waited for a vacant connection")
		}
		runtime.Gosched()
	}
}

// TestReview5CloseWakesWaiterWhoseContextEnds: with Wait and MaxActive, a
// Get waiting for a connection is woken by Close (redigo closes the
// pool's vacancy channel). When the waiter's context ends between that
// wake-up and redigo's second look at the context, redigo gives its
// vacancy back by sending on the channel it just closed: a panic ("send
// on closed channel") that takes the whole process down, at shutdown or
// when a node is removed while callers with deadlines wait for it. With
// one P the waker keeps running after the wake-up, so cancelling right
// after Close (or Remove) makes that interleaving the usual one. The Get
// must fail with ErrClosed (or its context's error), and never panic.
func TestReview5CloseWakesWaiterWhoseContextEnds(t *testing.T) {
	srv := plainServer(t)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))

	for round := range 10 {
		set, err := NewSet(Options{MaxActive: 1, Wait: true})
		if err != nil {
			t.Fatal(err)
		}
		holder, err := set.Get(context.Background(), srv.Addr)
		if err != nil {
			set.Close()
			t.Fatalf("round %d: Get: %v", round, err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			defer func() {
				if r := recover(); r != nil {
					done <- fmt.Errorf("Get panicked: %v", r)
				}
			}()
			c, err := set.Get(ctx, srv.Addr)
			if err == nil {
				c.Close()
				err = errors.New("Get succeeded on a closed Set")
			}
			done <- err
		}()
		review5WaitParked(t)
		if round%2 == 0 {
			set.Close()
		} else if err := set.Remove(srv.Addr); err != nil {
			t.Errorf("round %d: Remove: %v", round, err)
		}
		cancel()
		err = <-done
		holder.Close()
		set.Close()
		if !errors.Is(err, ErrClosed) && !errors.Is(err, context.Canceled) {
			t.Fatalf("round %d: waiting Get = %v, want ErrClosed or context.Canceled", round, err)
		}
	}
}
