package pool

import (
	"context"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
)

// TestReview14ScriptDebugIsNotHandedOn: after SCRIPT DEBUG YES the next
// EVAL on the connection starts a Lua debugging session (the server
// answers with the debugger's lines and waits for debugger commands)
// instead of running its script. A connection given back after it went
// to the next caller unchanged, whose EVAL then met the debugger. The
// next caller's EVAL must return its script's result.
func TestReview14ScriptDebugIsNotHandedOn(t *testing.T) {
	c := nextCallerAfter(t, "SCRIPT", "DEBUG", "YES")
	if v, err := redis.Int(c.Do("EVAL", "return 7", 0)); err != nil || v != 7 {
		t.Fatalf("the next caller's EVAL = %v, %v, want 7: the connection was handed on in debug mode", v, err)
	}
}

// TestReview14PsyncIsNotHandedOn: PSYNC ? -1 answers "+FULLRESYNC ..." at
// once and makes its connection a replica's link, on which the server
// answers nothing else. The connection went back to the pool after that
// reply and the next caller's command failed on it. The next caller must
// get a connection that answers.
func TestReview14PsyncIsNotHandedOn(t *testing.T) {
	c := nextCallerAfter(t, "PSYNC", "?", "-1")
	if v, err := redis.String(c.Do("ECHO", "mine")); err != nil || v != "mine" {
		t.Fatalf("the next caller's ECHO = %q, %v, want mine: the connection was handed on as a replica's link", v, err)
	}
}

// TestReview14ReplconfAckIsNotWaitedFor: the server never answers
// REPLCONF ACK from a client that is not a replica's link. A connection
// given back with its reply pending was read for the whole ReadTimeout
// (a minute here) before it was dropped; it must be closed at once, as
// after CLIENT REPLY OFF, and the next caller's connection answers.
func TestReview14ReplconfAckIsNotWaitedFor(t *testing.T) {
	srv := plainServer(t)
	set := newTestSet(t, Options{MaxIdle: 1, TestOnBorrow: Never, ReadTimeout: time.Minute})
	ctx := context.Background()
	c, err := set.Get(ctx, srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Send("REPLCONF", "ACK", "0"); err != nil {
		t.Fatal(err)
	}
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	closed := make(chan struct{})
	go func() {
		c.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(30 * time.Second):
		t.Fatal("Close waits for the reply of REPLCONF ACK, which never comes")
	}

	c, err = set.Get(ctx, srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if v, err := redis.String(c.Do("ECHO", "mine")); err != nil || v != "mine" {
		t.Fatalf("the next caller's ECHO = %q, %v, want mine", v, err)
	}
}

// nextCallerAfter runs one command on a connection of a one-connection
// pool, gives the connection back, and returns the connection the next
// caller borrows (closed when the test ends).
func nextCallerAfter(t *testing.T, cmd string, args ...any) redis.Conn {
	t.Helper()
	srv := plainServer(t)
	set := newTestSet(t, Options{MaxIdle: 1, TestOnBorrow: Never})
	ctx := context.Background()
	c, err := set.Get(ctx, srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Do(cmd, args...); err != nil {
		t.Fatal(err)
	}
	c.Close()
	c, err = set.Get(ctx, srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
