package pool

import (
	"context"
	"testing"

	"github.com/gomodule/redigo/redis"
)

// TestWatchLeftByRefusedExecIsNotHandedOn: EXEC or DISCARD without MULTI
// is refused by the server, and the keys WATCHed before stay watched.
// redigo's pool takes them for the end of the transaction and sends no
// UNWATCH, so the next caller of the connection inherited the watch: its
// own MULTI ... EXEC was aborted (a nil reply, nothing written) because
// of a key it never watched.
func TestWatchLeftByRefusedExecIsNotHandedOn(t *testing.T) {
	srv := plainServer(t)
	for _, end := range []string{"EXEC", "DISCARD"} {
		t.Run(end, func(t *testing.T) {
			set := newTestSet(t, Options{TestOnBorrow: Never})
			ctx := context.Background()
			c, err := set.Get(ctx, srv.Addr)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Do("WATCH", "watched"); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Do(end); err == nil {
				t.Fatalf("%s without MULTI succeeded", end)
			}
			c.Close()

			c, err = set.Get(ctx, srv.Addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			// Someone else writes the key the last caller watched.
			admin := adminConn(t, srv)
			if _, err := admin.Do("SET", "watched", end); err != nil {
				t.Fatal(err)
			}
			if err := c.Send("MULTI"); err != nil {
				t.Fatal(err)
			}
			if err := c.Send("SET", "mine", end); err != nil {
				t.Fatal(err)
			}
			reply, err := c.Do("EXEC")
			if err != nil {
				t.Fatal(err)
			}
			if reply == nil {
				t.Fatalf("the next caller's MULTI ... EXEC was aborted by the last caller's WATCH")
			}
			if v, err := redis.String(admin.Do("GET", "mine")); err != nil || v != end {
				t.Errorf("GET mine = %q, %v, want %q", v, err, end)
			}
		})
	}
}

// TestEndedTransactionConnIsHandedOn: a transaction that ended (EXEC,
// DISCARD), or that redigo's pool ends on return (UNWATCH, DISCARD),
// leaves the connection as fresh: it is handed on, not redialled.
func TestEndedTransactionConnIsHandedOn(t *testing.T) {
	srv := plainServer(t)
	tests := []struct {
		name string
		cmds [][]any
	}{
		{"WATCH MULTI EXEC", [][]any{{"WATCH", "k"}, {"MULTI"}, {"SET", "k", "v"}, {"EXEC"}}},
		{"WATCH MULTI DISCARD", [][]any{{"WATCH", "k"}, {"MULTI"}, {"DISCARD"}}},
		{"WATCH UNWATCH", [][]any{{"WATCH", "k"}, {"UNWATCH"}}},
		{"WATCH left open", [][]any{{"WATCH", "k"}}},
		{"MULTI left open", [][]any{{"WATCH", "k"}, {"MULTI"}, {"SET", "k", "v"}}},
		{"MULTI UNWATCH EXEC", [][]any{{"WATCH", "k"}, {"MULTI"}, {"UNWATCH"}, {"EXEC"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := newTestSet(t, Options{TestOnBorrow: Never})
			ctx := context.Background()
			c, err := set.Get(ctx, srv.Addr)
			if err != nil {
				t.Fatal(err)
			}
			for _, cmd := range tt.cmds {
				if _, err := c.Do(cmd[0].(string), cmd[1:]...); err != nil {
					t.Fatalf("%v: %v", cmd, err)
				}
			}
			c.Close()
			c, err = set.Get(ctx, srv.Addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := c.Do("PING"); err != nil {
				t.Fatal(err)
			}
			if d := set.Stats()[srv.Addr].Dials; d != 1 {
				t.Errorf("%d dials, want 1: a connection in the fresh state was not handed on", d)
			}
			if f := clientFlags(t, c); f != "N" {
				t.Errorf("the next caller's connection has flags %q, want N", f)
			}
		})
	}
}
