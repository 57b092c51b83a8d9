package pool

import (
	"context"
	"errors"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
)

// TestReview7ReceiveByNeverTimesOutEarly: the deadline already armed on
// the socket stood in for a later one asked for when it was less than
// deadlineSlack (5 ms) earlier (deadline.go's keep): a ReceiveBy whose
// reply had not come failed up to 5 ms before the deadline it was given,
// on a pooled connection (ReceiveBy turns the deadline into a timeout),
// and at once on a connection of Dial when the deadline in force had
// already passed. The first ReceiveBy arms a deadline (its reply needs a
// socket read); the second asks for one 4 ms after it, for a reply (BLPOP)
// that comes only after a second, and must not time out before it.
func TestReview7ReceiveByNeverTimesOutEarly(t *testing.T) {
	srv := plainServer(t)
	set := newTestSet(t, Options{})
	bg := context.Background()
	tests := []struct {
		name string
		conn func() (redis.Conn, error)
		wait bool // the second ReceiveBy comes once the first deadline has passed
	}{
		{"pooled, first deadline still ahead", func() (redis.Conn, error) { return set.Get(bg, srv.Addr) }, false},
		{"Dial, first deadline still ahead", func() (redis.Conn, error) { return set.Dial(bg, srv.Addr) }, false},
		{"pooled, first deadline passed", func() (redis.Conn, error) { return set.Get(bg, srv.Addr) }, true},
		{"Dial, first deadline passed", func() (redis.Conn, error) { return set.Dial(bg, srv.Addr) }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			verdicts := 0
			for round := 0; round < 20 && verdicts < 3; round++ {
				c, err := tt.conn()
				if err != nil {
					t.Fatal(err)
				}
				for _, cmd := range [][]any{{"PING"}, {"BLPOP", "review7:none", "5"}} {
					if err := c.Send(cmd[0].(string), cmd[1:]...); err != nil {
						t.Fatal(err)
					}
				}
				if err := c.Flush(); err != nil {
					t.Fatal(err)
				}
				// Long enough for PONG on a loaded machine.
				first := time.Now().Add(300 * time.Millisecond)
				if reply, err := ReceiveBy(c, first); err != nil || reply != "PONG" {
					c.Close()
					t.Fatalf("first ReceiveBy = %v, %v; want PONG", reply, err)
				}
				for tt.wait && time.Now().Before(first) {
					runtime.Gosched()
				}
				second := first.Add(4 * time.Millisecond)
				called := time.Now()
				_, err = ReceiveBy(c, second)
				returned := time.Now()
				c.Close()
				if !called.Before(second.Add(-time.Millisecond)) {
					continue // the machine was too slow to ask in time: no verdict
				}
				verdicts++
				var ne net.Error
				if !errors.As(err, &ne) || !ne.Timeout() {
					t.Fatalf("second ReceiveBy = %v, want a timeout", err)
				}
				if returned.Before(second) {
					t.Fatalf("ReceiveBy timed out %v before the deadline it was given", second.Sub(returned))
				}
			}
			if verdicts == 0 {
				t.Skip("the machine was too slow every time")
			}
		})
	}
}
