package pool

import (
	"context"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"
)

// TestReview10MoreLeftStateIsUndone: more of what a caller can leave on
// a connection: client-side caching (CLIENT TRACKING on, CLIENT CACHING),
// CLIENT NO-EVICT on, SELECT in a Set without a DB setting, RESET (which
// drops the user, database and name the connection was dialed with), a
// blocking command that has not answered yet, a SELECT silenced by
// CLIENT REPLY SKIP. The next caller's connection must be fresh: the
// configured database and name, no flags, no tracking, and it answers
// its own commands.
func TestReview10MoreLeftStateIsUndone(t *testing.T) {
	srv := plainServer(t)
	tests := []struct {
		name string
		db   int
		cmds [][]any
	}{
		{"CLIENT TRACKING on", 0, [][]any{{"CLIENT", "TRACKING", "on"}}},
		{"CLIENT TRACKING on OPTIN, CACHING yes", 0, [][]any{{"CLIENT", "TRACKING", "on", "OPTIN"}, {"CLIENT", "CACHING", "yes"}}},
		{"CLIENT NO-EVICT on", 0, [][]any{{"CLIENT", "NO-EVICT", "on"}}},
		{"SELECT without a DB setting", 0, [][]any{{"SELECT", 5}}},
		{"select in lower case", 2, [][]any{{"select", 0}}},
		{"RESET", 2, [][]any{{"RESET"}}},
		{"REPLY SKIP then SELECT", 0, [][]any{{"CLIENT", "REPLY", "SKIP"}, {"SELECT", 7}, {"PING"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := newTestSet(t, Options{DB: tt.db, ClientName: "fresh", TestOnBorrow: Never})
			ctx := context.Background()
			c, err := set.Get(ctx, srv.Addr)
			if err != nil {
				t.Fatal(err)
			}
			for _, cmd := range tt.cmds {
				if err := c.Send(cmd[0].(string), cmd[1:]...); err != nil {
					t.Fatal(err)
				}
			}
			if err := c.Flush(); err != nil {
				t.Fatal(err)
			}
			c.Close()

			c, err = set.Get(ctx, srv.Addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if reply, err := redis.String(c.Do("ECHO", "mine")); err != nil || reply != "mine" {
				t.Fatalf("the next caller's ECHO = %q, %v: a reply left over or missing", reply, err)
			}
			info, err := redis.String(c.Do("CLIENT", "INFO"))
			if err != nil {
				t.Fatal(err)
			}
			want := []string{" db=" + string(rune('0'+tt.db)) + " ", " name=fresh ", " flags=N ", " redir=-1 ", " resp=2"}
			for _, w := range want {
				if !strings.Contains(info, w) {
					t.Errorf("the next caller's connection is not fresh: CLIENT INFO %q lacks %q", info, w)
				}
			}
		})
	}
}
