package pool

import (
	"context"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"

	"github.com/shardis/shardis/shard/command"
)

// TestLeavesStateFollowsEffectOf checks leavesState against the command
// table: every command that command.EffectOf says changes its connection
// is caught, apart from those redigo's pool undoes itself (transactions,
// SUBSCRIBE, PSUBSCRIBE, MONITOR) and ASKING; no other is.
func TestLeavesStateFollowsEffectOf(t *testing.T) {
	undoneByRedigo := map[string]bool{"subscribe": true, "psubscribe": true, "unsubscribe": true,
		"punsubscribe": true, "sunsubscribe": true, "monitor": true, "asking": true}
	all := command.All()
	if len(all) < 200 {
		t.Fatalf("command table of %d entries", len(all))
	}
	for _, info := range all {
		if strings.Contains(info.Name, "|") {
			continue // a subcommand: covered below through its container
		}
		eff := command.EffectOf(info, info.Name, nil)
		want := eff != command.Stateless && eff != command.Transaction && !undoneByRedigo[info.Name]
		for _, name := range []string{info.Name, strings.ToUpper(info.Name)} {
			if got := leavesState(name, nil); got != want {
				t.Errorf("leavesState(%q) = %t, want %t (effect %s)", name, got, want, eff)
			}
		}
	}
	tests := []struct {
		cmd  string
		args []any
		want bool
	}{
		{"CLIENT", []any{"TRACKING", "ON"}, true},
		{"client", []any{[]byte("no-evict"), "on"}, true},
		{"CLIENT", []any{"REPLY", "OFF"}, true},
		{"CLIENT", []any{"REPLY", "ON"}, false},
		{"CLIENT", []any{"SETNAME", "x"}, true},
		{"CLIENT", []any{"CAPA", "redirect"}, true},
		{"CLIENT", []any{"IMPORT-SOURCE", "ON"}, true},
		{"client", []any{[]byte("import-source"), "off"}, true},
		{"CLIENT", []any{"GETNAME"}, false},
		{"CLIENT", []any{"ID"}, false},
		{"CLIENT", []any{"KILL", "ID", "7", "SKIPME", "no"}, true},
		{"client", []any{[]byte("kill"), "127.0.0.1:5000"}, true},
		{"HELLO", []any{"3"}, true},
		{"HELLO", []any{"2", "SETNAME", "x"}, true},
		{"HELLO", []any{"2"}, false},
		{"SELECT", []any{1}, true},
		{"SSUBSCRIBE", []any{"ch"}, true},
		{"SCRIPT", []any{"DEBUG", "YES"}, true},
		{"script", []any{"debug", []byte("sync")}, true},
		{"SCRIPT", []any{"DEBUG", "NO"}, false},
		{"SCRIPT", []any{"FLUSH"}, false},
		{"PSYNC", []any{"?", "-1"}, true},
		{"sync", nil, true},
		{"REPLCONF", []any{"GETACK", "*"}, true},
		{"GET", []any{"k"}, false},
		{"SET", []any{"select", "client"}, false},
	}
	for _, tt := range tests {
		if got := leavesState(tt.cmd, tt.args); got != tt.want {
			t.Errorf("leavesState(%s %v) = %t, want %t", tt.cmd, tt.args, got, tt.want)
		}
	}
}

// TestChangedConnIsNotHandedOn runs a command on a pooled connection,
// gives it back, and borrows again: after a command that changed the
// connection the next caller gets a fresh one (a second dial) in the
// state the options set up; after any other, the same connection.
func TestChangedConnIsNotHandedOn(t *testing.T) {
	tests := []struct {
		name      string
		args      []any
		wantDials int64
	}{
		{"SELECT", []any{"SELECT", 5}, 2},
		{"SSUBSCRIBE", []any{"SSUBSCRIBE", "news"}, 2},
		{"CLIENT TRACKING", []any{"CLIENT", "TRACKING", "ON"}, 2},
		{"CLIENT NO-EVICT", []any{"CLIENT", "NO-EVICT", "ON"}, 2},
		{"CLIENT SETNAME", []any{"CLIENT", "SETNAME", "someone"}, 2},
		{"RESET", []any{"RESET"}, 2},
		{"GET", []any{"GET", "k"}, 1},
		{"CLIENT GETNAME", []any{"CLIENT", "GETNAME"}, 1},
		{"CLIENT REPLY ON", []any{"CLIENT", "REPLY", "ON"}, 1},
	}
	srv := plainServer(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The setup's own SELECT and name are the fresh state.
			set := newTestSet(t, Options{DB: 2, ClientName: "app", TestOnBorrow: Never})
			ctx := context.Background()
			c, err := set.Get(ctx, srv.Addr)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Do(tt.args[0].(string), tt.args[1:]...); err != nil {
				t.Fatalf("%v: %v", tt.args, err)
			}
			c.Close()

			c, err = set.Get(ctx, srv.Addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := c.Do("SET", "k", "v"); err != nil {
				t.Fatalf("the next caller's SET: %v", err)
			}
			info, err := redis.String(c.Do("CLIENT", "INFO"))
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{" db=2 ", " name=app ", " flags=N "} {
				if !strings.Contains(info, want) {
					t.Errorf("the next caller's connection is not fresh: CLIENT INFO %q lacks %q", info, want)
				}
			}
			if st := set.Stats()[srv.Addr]; st.Dials != tt.wantDials {
				t.Errorf("%d dials, want %d", st.Dials, tt.wantDials)
			}
		})
	}
}
