package pool

import (
	"context"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"
)

// borrowLive borrows a connection and returns it with the liveConn behind
// it.
func borrowLive(t *testing.T, set *Set, addr string) (redis.Conn, *liveConn) {
	t.Helper()
	slot := &liveSlot{}
	c, err := set.get(context.WithValue(context.Background(), liveSlotKey{}, slot), addr, false)
	if err != nil {
		t.Fatal(err)
	}
	if slot.lc == nil {
		t.Fatal("no liveConn behind the borrowed connection")
	}
	return c, slot.lc
}

// TestIdleConnHoldsNoBuffers checks that a connection keeps its read and
// write buffers only while a reply is expected: after a pipeline's last
// reply, after Do, and after a reply larger than the read buffer, it holds
// neither, and it keeps working when used again.
func TestIdleConnHoldsNoBuffers(t *testing.T) {
	srv := plainServer(t)
	set := newTestSet(t, Options{})
	big := strings.Repeat("x", 3*readBufferSize)

	for round := range 2 {
		c, lc := borrowLive(t, set, srv.Addr)
		const n = 100
		for i := range n {
			if err := c.Send("SET", i, "v"); err != nil {
				t.Fatal(err)
			}
		}
		if lc.wbuf == nil {
			t.Fatalf("round %d: no write buffer while commands are queued", round)
		}
		if err := c.Flush(); err != nil {
			t.Fatal(err)
		}
		if lc.wbuf != nil {
			t.Errorf("round %d: write buffer kept after Flush (cap %d)", round, cap(lc.wbuf))
		}
		for i := range n {
			r, err := redis.String(c.Receive())
			if err != nil || r != "OK" {
				t.Fatalf("round %d: reply %d: %q, %v", round, i, r, err)
			}
			if i < n-1 && lc.rd.buf == nil && lc.rd.buffered() {
				t.Fatalf("round %d: buffered bytes without a buffer", round)
			}
		}
		if lc.rd.buf != nil {
			t.Errorf("round %d: read buffer kept after the last reply (%d bytes)", round, len(lc.rd.buf))
		}
		if _, err := c.Do("SET", "big", big); err != nil {
			t.Fatal(err)
		}
		got, err := redis.String(c.Do("GET", "big"))
		if err != nil || got != big {
			t.Fatalf("round %d: GET big: %d bytes, %v", round, len(got), err)
		}
		if lc.rd.buf != nil || lc.wbuf != nil {
			t.Errorf("round %d: after Do: read buffer %d bytes, write buffer cap %d; want none",
				round, len(lc.rd.buf), cap(lc.wbuf))
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		if lc.rd.buf != nil || lc.wbuf != nil {
			t.Errorf("round %d: idle in the pool with buffers", round)
		}
	}
	if st := set.Stats()[srv.Addr]; st.Dials != 1 {
		t.Errorf("Stats = %+v, want one dial (the connection reused)", st)
	}
}

// TestBufferKeptWhileRepliesPending checks that a pipeline whose replies
// are read one by one keeps its read buffer until the last one: the
// replies that arrived together are parsed from it, not lost.
func TestBufferKeptWhileRepliesPending(t *testing.T) {
	srv := plainServer(t)
	set := newTestSet(t, Options{})
	c, lc := borrowLive(t, set, srv.Addr)
	defer c.Close()
	for i := range 50 {
		if err := c.Send("ECHO", i); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		r, err := redis.Int(c.Receive())
		if err != nil || r != i {
			t.Fatalf("reply %d: %d, %v", i, r, err)
		}
		if i < 49 && lc.rd.buf == nil {
			t.Fatalf("read buffer released after reply %d of 50", i)
		}
	}
	if lc.rd.buf != nil {
		t.Error("read buffer kept after the last reply")
	}
}
