package pool

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
)

// review5TakeOnlyConn takes the one connection a server started with
// --maxclients 1 allows. The harness's own readiness connection may still
// be counted for a moment: it retries until one is accepted.
func review5TakeOnlyConn(t *testing.T, srv *testServer) redis.Conn {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := redis.Dial("tcp", srv.Addr, redis.DialConnectTimeout(2*time.Second), redis.DialReadTimeout(2*time.Second))
		if err == nil {
			if _, err = c.Do("PING"); err == nil {
				return c
			}
			c.Close()
		}
		if time.Now().After(deadline) {
			t.Fatalf("could not take the server's only connection: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// review5CheckRefusal checks that err reports the server's maxclients
// refusal as a *DialError for addr, not as the reply to the caller's
// command nor as an authentication failure.
func review5CheckRefusal(t *testing.T, what string, err error, addr string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s succeeded on a server at maxclients", what)
	}
	if !strings.Contains(err.Error(), "max number of clients") {
		t.Fatalf("%s = %v, want the server's maxclients reply", what, err)
	}
	var de *DialError
	if !errors.As(err, &de) || de.Addr != addr {
		t.Errorf("%s = %v (%T): want a *DialError for %s (the command never reached the server; the node is full, not answering the command)", what, err, err, addr)
	}
	if errors.Is(err, ErrAuth) {
		t.Errorf("%s = %v: reported as an authentication failure", what, err)
	}
	var reply redis.Error
	if !errors.As(err, &reply) {
		t.Errorf("%s = %v: the server's reply should stay reachable as a redis.Error", what, err)
	}
}

// TestReview5FullServerWithoutSetupCommands: a Set with no password, no
// client name, database 0 sends no command while dialing, so a server at
// maxclients, which answers the new connection with "-ERR max number of
// clients reached" before reading anything and closes it, is not noticed
// by the dial. The caller's first command then read that reply as its own:
// a plain redis.Error, as if the server had refused the command (a SET
// refused for its arguments), when the command never ran and the
// connection was never usable. It must be the same *DialError a dial that
// sent AUTH reports (TestFullServerIsNotAnAuthFailure), so that callers
// retry it as a command that was not sent, and every reply of a pipeline
// sent on it must say so.
func TestReview5FullServerWithoutSetupCommands(t *testing.T) {
	srv := plainServer(t, "--maxclients", "1")
	holder := review5TakeOnlyConn(t, srv)
	defer holder.Close()

	set := newTestSet(t, Options{})
	ctx := context.Background()

	// One command.
	c, err := set.Get(ctx, srv.Addr)
	if err == nil {
		_, err = c.Do("SET", "review5:full", "written")
		c.Close()
	}
	review5CheckRefusal(t, "Get+SET", err, srv.Addr)

	// A pipeline: every reply reports the refusal.
	c, err = set.Get(ctx, srv.Addr)
	if err == nil {
		var errs []error
		for _, k := range []string{"review5:a", "review5:b"} {
			if err := c.Send("SET", k, "v"); err != nil {
				errs = append(errs, err)
			}
		}
		if err := c.Flush(); err != nil {
			errs = append(errs, err)
		}
		for range 2 {
			if _, err := c.Receive(); err != nil {
				errs = append(errs, err)
			} else {
				errs = append(errs, nil)
			}
		}
		c.Close()
		if len(errs) == 0 {
			t.Fatal("the pipeline reported nothing")
		}
		for _, err := range errs {
			review5CheckRefusal(t, "pipeline step", err, srv.Addr)
		}
	} else {
		review5CheckRefusal(t, "Get for the pipeline", err, srv.Addr)
	}

	// With room again, the same Set works, and nothing was written.
	holder.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := set.Get(ctx, srv.Addr)
		var n int
		if err == nil {
			n, err = redis.Int(c.Do("EXISTS", "review5:full", "review5:a", "review5:b"))
			c.Close()
		}
		if err == nil {
			if n != 0 {
				t.Errorf("EXISTS = %d: a refused connection's command was run", n)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Get after the server had room: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
