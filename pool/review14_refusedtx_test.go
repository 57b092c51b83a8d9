package pool

import (
	"fmt"
	"testing"

	"github.com/gomodule/redigo/redis"
)

// TestReview14RefusedTxStateIsNotHandedOn: a MULTI, DISCARD or EXEC that
// the server refuses (its ACL user may not run it, or a wrong argument
// count) leaves the server's transaction state other than the commands
// sent suggest: after a refused MULTI there is no transaction, so the
// EXEC or DISCARD after it is refused too and the keys WATCHed (before
// or after it) stay watched; after a refused DISCARD the transaction
// stays open. The connection must not go to the next caller so: its
// ECHO must be answered (not QUEUED), and its MULTI ... EXEC must run
// although another client changed the key the previous caller watched.
func TestReview14RefusedTxStateIsNotHandedOn(t *testing.T) {
	srv := plainServer(t)
	admin := adminConn(t, srv)
	const user, pass = "txuser", "txuserpw"
	type step struct {
		send bool // Send instead of Do
		args []any
	}
	do := func(args ...any) step { return step{args: args} }
	send := func(args ...any) step { return step{send: true, args: args} }
	const key = "review14:refusedtx:watched"
	tests := []struct {
		name  string
		deny  string // the command the ACL user may not run, if any
		steps []step
	}{
		{"WATCH, refused MULTI, EXEC", "multi", []step{do("WATCH", key), do("MULTI"), do("SET", "other", "v"), do("EXEC")}},
		{"WATCH, refused MULTI, DISCARD", "multi", []step{do("WATCH", key), do("MULTI"), do("DISCARD")}},
		{"WATCH, refused MULTI", "multi", []step{do("WATCH", key), do("MULTI")}},
		{"refused MULTI, WATCH", "multi", []step{do("MULTI"), do("WATCH", key)}},
		{"refused MULTI, WATCH, EXEC", "multi", []step{do("MULTI"), do("WATCH", key), do("EXEC")}},
		{"pipelined WATCH, refused MULTI, EXEC", "multi", []step{send("WATCH", key), send("MULTI"), send("SET", "other", "v"), send("EXEC"), do("")}},
		{"pipelined refused MULTI, WATCH", "multi", []step{send("MULTI"), send("WATCH", key), do("")}},
		{"WATCH, MULTI with an argument, EXEC", "", []step{do("WATCH", key), do("MULTI", "x"), do("EXEC")}},
		{"MULTI with an argument, WATCH", "", []step{do("MULTI", "x"), do("WATCH", key)}},
		{"refused DISCARD", "discard", []step{do("WATCH", key), do("MULTI"), do("SET", "other", "v"), do("DISCARD")}},
		{"refused DISCARD left to the return", "discard", []step{do("WATCH", key), do("MULTI"), do("SET", "other", "v")}},
		{"DISCARD with an argument", "", []step{do("WATCH", key), do("MULTI"), do("SET", "other", "v"), do("DISCARD", "x")}},
		{"refused EXEC", "exec", []step{do("WATCH", key), do("MULTI"), do("SET", "other", "v"), do("EXEC")}},
		{"EXEC with an argument", "", []step{do("WATCH", key), do("MULTI"), do("SET", "other", "v"), do("EXEC", "x")}},
		{"refused MULTI, RESET", "multi", []step{do("WATCH", key), do("MULTI"), do("RESET")}},
	}
	for _, b := range borrowers {
		for _, tt := range tests {
			t.Run(b.name+"/"+tt.name, func(t *testing.T) {
				acl := []any{"SETUSER", user, "on", ">" + pass, "~*", "&*", "+@all"}
				if tt.deny != "" {
					acl = append(acl, "-"+tt.deny)
				}
				if _, err := admin.Do("ACL", acl...); err != nil {
					t.Fatal(err)
				}
				set := newTestSet(t, Options{Username: user, Password: pass, TestOnBorrow: Never})
				c, err := b.get(set, srv.Addr)
				if err != nil {
					t.Fatal(err)
				}
				for _, s := range tt.steps {
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

				// The next caller may run the whole transaction, and
				// another client changes the key the first one watched.
				if _, err := admin.Do("ACL", "SETUSER", user, "+@all"); err != nil {
					t.Fatal(err)
				}
				if _, err := admin.Do("INCR", key); err != nil {
					t.Fatal(err)
				}
				next, err := b.get(set, srv.Addr)
				if err != nil {
					t.Fatal(err)
				}
				defer next.Close()
				if r, err := redis.String(next.Do("ECHO", "next")); err != nil || r != "next" {
					t.Errorf("the next caller's ECHO = %q, %v: the connection was handed on inside the previous caller's transaction", r, err)
					return
				}
				next.Send("MULTI")
				next.Send("SET", "review14:refusedtx:next", "v")
				replies, err := redis.Values(next.Do("EXEC"))
				if err != nil || fmt.Sprint(replies) != "[OK]" {
					t.Errorf("the next caller's MULTI, SET, EXEC = %v, %v: the key the previous caller watched is still watched on the connection", replies, err)
				}
			})
		}
	}
}
