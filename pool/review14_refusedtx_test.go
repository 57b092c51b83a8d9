package pool

import "testing"

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
	type step = txStep
	do, send := txDo, txSend
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
				checkTxStateNotHandedOn(t, admin, srv.Addr, b.get, user, pass, tt.deny, tt.steps, []string{key}, "review14:refusedtx:next")
			})
		}
	}
}
