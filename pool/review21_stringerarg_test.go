package pool

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
)

// r21Word is an argument of a type of the caller's own that is neither a
// string nor a number: redigo (and the pool's encoder) sends what fmt
// prints for it, its String method's text.
type r21Word struct{ s string }

func (w r21Word) String() string { return w.s }

// TestReview21StringerSubcommandIsNotHandedOn: a CLIENT subcommand given
// as a value that fmt prints (a Stringer), which is what the server
// receives, changes the connection as the same word given as a string
// does: the next caller (the pool holds one connection) gets a fresh
// connection, not one under another name, tracking, with no-evict, or
// with its replies silenced.
func TestReview21StringerSubcommandIsNotHandedOn(t *testing.T) {
	srv := plainServer(t)
	tests := []struct {
		name string
		args []any
		read bool // the command answers: Do; else Send and Flush
	}{
		{"CLIENT SETNAME", []any{r21Word{"SETNAME"}, "intruder"}, true},
		{"CLIENT NO-EVICT", []any{r21Word{"no-evict"}, "on"}, true},
		{"CLIENT TRACKING", []any{r21Word{"TRACKING"}, "on", "BCAST"}, true},
		{"CLIENT REPLY OFF", []any{r21Word{"REPLY"}, "OFF"}, false},
		{"SCRIPT DEBUG YES", []any{r21Word{"DEBUG"}, "YES"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := newTestSet(t, Options{ClientName: "fresh", MaxActive: 1, Wait: true,
				TestOnBorrow: Never, ReadTimeout: 2 * time.Second})
			ctx := context.Background()
			c, err := set.Get(ctx, srv.Addr)
			if err != nil {
				t.Fatal(err)
			}
			id, err := redis.Int64(c.Do("CLIENT", "ID"))
			if err != nil {
				t.Fatal(err)
			}
			cmd := "CLIENT"
			if strings.HasPrefix(tt.name, "SCRIPT") {
				cmd = "SCRIPT"
			}
			if tt.read {
				if _, err := c.Do(cmd, tt.args...); err != nil {
					t.Fatalf("%s: %v", tt.name, err)
				}
			} else {
				if err := c.Send(cmd, tt.args...); err != nil {
					t.Fatal(err)
				}
				if err := c.Flush(); err != nil {
					t.Fatal(err)
				}
			}
			start := time.Now()
			c.Close()
			if took := time.Since(start); !tt.read && took > time.Second {
				t.Errorf("giving back a connection whose replies are silenced took %v: it waited for a reply that never comes", took)
			}

			c, err = set.Get(ctx, srv.Addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if reply, err := redis.String(c.Do("ECHO", "mine")); err != nil || reply != "mine" {
				t.Fatalf("the next caller's ECHO = %q, %v", reply, err)
			}
			info, err := redis.String(c.Do("CLIENT", "INFO"))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(info, " id="+strconv.FormatInt(id, 10)+" ") {
				t.Logf("same connection %d handed on", id)
			}
			for _, w := range []string{" name=fresh ", " flags=N ", " redir=-1 "} {
				if !strings.Contains(info, w) {
					t.Errorf("the next caller's connection is not fresh: CLIENT INFO %q lacks %q", info, w)
				}
			}
			// SCRIPT DEBUG YES shows in no CLIENT INFO field: an EVAL
			// would start a debugging session instead of running.
			if v, err := redis.Int64(c.Do("EVAL", "return 7", 0)); err != nil || v != 7 {
				t.Errorf("the next caller's EVAL = %v, %v: the connection is in the Lua debugger", v, err)
			}
		})
	}
}
