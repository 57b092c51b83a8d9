package pool

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"

	"github.com/gomodule/redigo/redis"
)

// TestReview10RepliesBeforeAResetWriteAreRead: a server refuses a value
// over its proto-max-bulk-len as soon as it reads the length, answers
// with a protocol error and resets the connection, while the client is
// still writing (the value, or the next command's). The failed write
// closed the connection at once, and with it the reply already in the
// socket: the command written whole before it, refused and known not to
// have run, got the write's "connection reset" instead, which reads as
// "may have run". The reply must be read: the server's refusal.
func TestReview10RepliesBeforeAResetWriteAreRead(t *testing.T) {
	srv := plainServer(t, "--proto-max-bulk-len", "1mb")
	set := newTestSet(t, Options{})
	big := strings.Repeat("x", 1<<20+1)
	const rounds = 20
	checked := 0
	for range rounds {
		c, err := set.Get(context.Background(), srv.Addr)
		if err != nil {
			t.Fatal(err)
		}
		// The first SET is written whole (a write of its own: it
		// exceeds the write buffer); a later one's write meets the
		// server's reset.
		sent, werr := 0, error(nil)
		for sent < 16 && werr == nil {
			werr = c.Send("SET", "review10:big", big)
			sent++
		}
		if werr == nil {
			werr = c.Flush()
		}
		if werr == nil || sent < 2 {
			// The first write already failed (its value was cut short),
			// or every write made it: nothing to check this round.
			c.Close()
			continue
		}
		if !errors.Is(werr, syscall.ECONNRESET) && !errors.Is(werr, syscall.EPIPE) {
			t.Fatalf("the failed write: %v, want a reset", werr)
		}
		checked++
		_, err = c.Receive()
		var re redis.Error
		if !errors.As(err, &re) || !strings.Contains(string(re), "Protocol error") {
			t.Errorf("the reply of the SET written whole before the reset = %v, want the server's protocol error", err)
		}
		if _, err := c.Receive(); err == nil {
			t.Error("a second reply after the server reset the connection")
		}
		if c.Err() == nil {
			t.Error("the connection is usable after a failed write")
		}
		c.Close()
	}
	if checked == 0 {
		t.Skipf("in %d rounds no write after a whole one met the server's reset", rounds)
	}
	t.Logf("%d of %d rounds checked", checked, rounds)

	// The connections were closed, not kept: the next Get answers.
	c, err := set.Get(context.Background(), srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Do("SET", "review10:after", "1"); err != nil {
		t.Fatal(err)
	}
}
