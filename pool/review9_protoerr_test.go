package pool

import (
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"
)

// TestProtocolErrorConnIsNotHandedOn: a command the server refuses with a
// protocol error (a value over proto-max-bulk-len) ends its connection:
// the server closes it after the reply and reads nothing more from it.
// Given back at once, the connection looked alive to the borrow check
// until that close arrived, and the next caller's command went to a
// connection the server ignores: it failed with a reset, or waited for
// its read timeout, for no fault of the node.
func TestProtocolErrorConnIsNotHandedOn(t *testing.T) {
	srv := plainServer(t, "--proto-max-bulk-len", "1mb")
	set := newTestSet(t, Options{TestOnBorrow: Never})
	value := strings.Repeat("x", 1<<20+1)
	const rounds = 50
	refused := 0
	failed, firstErr := nextBorrowFailures(t, set, srv.Addr, rounds, func(c redis.Conn, _ int) {
		_, err := c.Do("SET", "big", value)
		if err == nil {
			t.Fatal("SET over proto-max-bulk-len succeeded")
		}
		if _, ok := err.(redis.Error); ok {
			refused++ // the server's reply, not a reset seen first
		}
	}, "INCR", "count")
	if refused == 0 {
		t.Skip("the server's reset always arrived before its protocol error reply: nothing to check")
	}
	if failed > 0 {
		t.Errorf("%d of %d commands borrowed right after a protocol error (%d seen as the server's reply) failed, the first with: %v",
			failed, rounds, refused, firstErr)
	}
}
