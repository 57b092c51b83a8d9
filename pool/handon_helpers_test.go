package pool

import (
	"context"
	"fmt"
	"testing"

	"github.com/gomodule/redigo/redis"
)

// nextBorrowFailures runs rounds of: borrow a connection from set, end it
// with end (a command after which the server closes the connection),
// give it back, borrow again at once and send cmd with args. It returns
// how many of those commands failed, and the first error: a connection
// the server is closing was handed to the next caller.
func nextBorrowFailures(t *testing.T, set *Set, addr string, rounds int, end func(c redis.Conn, round int), cmd string, args ...any) (failed int, first error) {
	t.Helper()
	ctx := context.Background()
	for i := range rounds {
		c, err := set.Get(ctx, addr)
		if err != nil {
			t.Fatal(err)
		}
		end(c, i)
		c.Close()

		c, err = set.Get(ctx, addr)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Do(cmd, args...); err != nil {
			failed++
			if first == nil {
				first = err
			}
		}
		c.Close()
	}
	return failed, first
}

// txStep is one command of a caller's: sent with Send if send is set,
// run with Do otherwise.
type txStep struct {
	send bool
	args []any
}

// txDo is a command run with Do.
func txDo(args ...any) txStep { return txStep{args: args} }

// txSend is a command sent with Send.
func txSend(args ...any) txStep { return txStep{send: true, args: args} }

// checkTxStateNotHandedOn lets ACL user user (password pass, every
// permission but command deny, if deny is not empty) borrow a connection
// with get from a new Set on admin's server at addr, run steps on it
// (refusals expected, a failed connection not) and give it back. Then
// the user may run everything again, admin changes the watched keys, and
// the next caller's ECHO must be answered (not QUEUED) and its MULTI,
// SET nextKey, EXEC must run: the connection must not be handed on
// inside the previous caller's transaction or with its keys watched.
func checkTxStateNotHandedOn(t *testing.T, admin redis.Conn, addr string, get func(*Set, string) (redis.Conn, error), user, pass, deny string, steps []txStep, watched []string, nextKey string) {
	t.Helper()
	acl := []any{"SETUSER", user, "on", ">" + pass, "~*", "&*", "+@all"}
	if deny != "" {
		acl = append(acl, "-"+deny)
	}
	if _, err := admin.Do("ACL", acl...); err != nil {
		t.Fatal(err)
	}
	set := newTestSet(t, Options{Username: user, Password: pass, TestOnBorrow: Never})
	c, err := get(set, addr)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range steps {
		if s.send {
			if err := c.Send(s.args[0].(string), s.args[1:]...); err != nil {
				t.Fatal(err)
			}
			continue
		}
		// The refusals are expected; a failed connection is not.
		c.Do(s.args[0].(string), s.args[1:]...)
		if err := c.Err(); err != nil {
			t.Fatalf("%v: connection failed: %v", s.args, err)
		}
	}
	c.Close()

	// The next caller may run the whole transaction, and another client
	// changes the keys the first one watched.
	if _, err := admin.Do("ACL", "SETUSER", user, "+@all"); err != nil {
		t.Fatal(err)
	}
	for _, k := range watched {
		if _, err := admin.Do("INCR", k); err != nil {
			t.Fatal(err)
		}
	}
	next, err := get(set, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close()
	if r, err := redis.String(next.Do("ECHO", "next")); err != nil || r != "next" {
		t.Errorf("the next caller's ECHO = %q, %v: the connection was handed on inside the previous caller's transaction", r, err)
		return
	}
	next.Send("MULTI")
	next.Send("SET", nextKey, "v")
	replies, err := redis.Values(next.Do("EXEC"))
	if err != nil || fmt.Sprint(replies) != "[OK]" {
		t.Errorf("the next caller's MULTI, SET, EXEC = %v, %v: a key the previous caller watched is still watched on the connection", replies, err)
	}
}
