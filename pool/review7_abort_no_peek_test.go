package pool

import (
	"context"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
)

// TestReview7AbortedConnNeverReusedWithoutPeek: where sockets cannot be
// peeked at (peek_other.go: every platform but unix), nothing but the
// connection's own failure keeps an aborted connection out of the pool.
// GetAbortable's abort closed the socket without marking the connection
// failed, so one aborted while no I/O was in progress (what the shard
// package does when replies may be left unread, or a stateful command
// ran) went back to the pool as healthy and was handed out again, its
// socket closed. Each way a command can be cut short must leave the
// connection failed, and the next Get must hand out a working one. The
// peeker is switched off (nil, as newPeeker returns where it cannot
// look), so this runs the non-unix logic on any platform.
func TestReview7AbortedConnNeverReusedWithoutPeek(t *testing.T) {
	srv := plainServer(t)
	bg := context.Background()
	tests := []struct {
		name string
		cut  func(t *testing.T, c redis.Conn, abort func())
	}{
		{"abort with nothing in progress", func(t *testing.T, c redis.Conn, abort func()) {
			abort()
		}},
		{"abort with a reply unread", func(t *testing.T, c redis.Conn, abort func()) {
			if err := c.Send("BLPOP", "review7:none", "2"); err != nil {
				t.Fatal(err)
			}
			if err := c.Flush(); err != nil {
				t.Fatal(err)
			}
			abort()
		}},
		{"abort during a read", func(t *testing.T, c redis.Conn, abort func()) {
			time.AfterFunc(50*time.Millisecond, abort)
			if _, err := c.Do("BLPOP", "review7:none", "2"); err == nil {
				t.Error("BLPOP cut short by abort succeeded")
			}
		}},
		{"context cancelled during a read", func(t *testing.T, c redis.Conn, abort func()) {
			ctx, cancel := context.WithCancel(bg)
			time.AfterFunc(50*time.Millisecond, cancel)
			if _, err := redis.DoContext(c, ctx, "BLPOP", "review7:none", "2"); err == nil {
				t.Error("BLPOP cut short by its context succeeded")
			}
		}},
		{"context deadline during a read", func(t *testing.T, c redis.Conn, abort func()) {
			ctx, cancel := context.WithTimeout(bg, 50*time.Millisecond)
			defer cancel()
			if _, err := redis.DoContext(c, ctx, "BLPOP", "review7:none", "2"); err == nil {
				t.Error("BLPOP cut short by its deadline succeeded")
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := newTestSet(t, Options{})
			slot := &liveSlot{}
			c, err := set.get(context.WithValue(bg, liveSlotKey{}, slot), srv.Addr, false)
			if err != nil {
				t.Fatal(err)
			}
			if slot.lc == nil {
				c.Close()
				t.Fatal("the borrow recorded no connection")
			}
			slot.lc.peek = nil // no peeking, as on non-unix platforms
			abort := func() { slot.lc.closeLend(slot.lend) }
			tt.cut(t, c, abort)
			if slot.lc.Err() == nil {
				t.Error("the connection whose command was cut short does not report a failure (Err is nil)")
			}
			c.Close()
			if st := set.Stats()[srv.Addr]; st.Active != 0 {
				t.Errorf("after giving it back: Stats = %+v, want the connection closed, not pooled", st)
			}
			next, err := set.Get(bg, srv.Addr)
			if err != nil {
				t.Fatal(err)
			}
			defer next.Close()
			if got, err := redis.String(next.Do("PING")); err != nil || got != "PONG" {
				t.Errorf("the next Get handed out a connection that answers PING with %q, %v", got, err)
			}
		})
	}
}
