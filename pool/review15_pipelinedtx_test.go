package pool

import "testing"

// TestReview15PipelinedTxStateIsNotHandedOn: the server's WATCH and
// MULTI state after a caller's commands is what they suggest only if
// the server accepted the commands that end it. An UNWATCH the server
// refuses (its ACL user may not run it, or an argument given, as if it
// took keys) leaves the keys watched, and so does the UNWATCH that the
// pool's return sends for a WATCH left behind; several transactions
// pipelined, some of their MULTI, EXEC or DISCARD refused, with WATCH,
// DISCARD or RESET between them, must not leave a transaction open or
// keys watched either. The next caller's ECHO must be answered (not
// QUEUED) and its MULTI ... EXEC must run although another client
// changed the keys the previous caller watched.
func TestReview15PipelinedTxStateIsNotHandedOn(t *testing.T) {
	srv := plainServer(t)
	admin := adminConn(t, srv)
	const user, pass = "ptxuser", "ptxuserpw"
	const key, key2 = "review15:pipelinedtx:watched", "review15:pipelinedtx:watched2"
	type step = txStep
	do, send := txDo, txSend
	// tx sends MULTI (with its arguments, if any), SET and end.
	tx := func(multi []any, end ...any) []step {
		return []step{send(multi...), send("SET", "review15:pipelinedtx:other", "v"), send(end...)}
	}
	flush := do("")
	seq := func(parts ...[]step) []step {
		var all []step
		for _, p := range parts {
			all = append(all, p...)
		}
		return all
	}
	multi, badMulti := []any{"MULTI"}, []any{"MULTI", "x"}
	tests := []struct {
		name  string
		deny  string // the command the ACL user may not run, if any
		steps []step
	}{
		{"UNWATCH with an argument", "", []step{do("WATCH", key), do("UNWATCH", key)}},
		{"refused UNWATCH", "unwatch", []step{do("WATCH", key), do("UNWATCH")}},
		{"refused UNWATCH left to the return", "unwatch", []step{do("WATCH", key), do("GET", key)}},
		{"pipelined WATCH, UNWATCH with an argument", "", []step{send("WATCH", key), send("UNWATCH", key), flush}},
		{"pipelined refused UNWATCH twice", "unwatch", []step{send("WATCH", key), send("UNWATCH"), send("WATCH", key2), send("UNWATCH"), flush}},
		{"pipelined transaction, WATCH, UNWATCH with an argument", "",
			seq([]step{send("WATCH", key2)}, tx(multi, "EXEC"), []step{send("WATCH", key), send("UNWATCH", key), flush})},
		{"pipelined refused UNWATCH, then a transaction", "unwatch",
			seq([]step{send("WATCH", key), send("UNWATCH")}, tx(multi, "EXEC"), []step{send("WATCH", key), send("UNWATCH"), flush})},
		{"pipelined MULTI with an argument, then a transaction", "",
			seq([]step{send("WATCH", key)}, tx(badMulti, "EXEC"), tx(multi, "EXEC"), []step{flush})},
		{"pipelined transaction, then MULTI with an argument", "",
			seq(tx(multi, "EXEC"), []step{send("WATCH", key)}, tx(badMulti, "EXEC"), []step{flush})},
		{"pipelined transactions, MULTI refused", "multi",
			seq([]step{send("WATCH", key)}, tx(multi, "EXEC"), []step{send("WATCH", key)}, tx(multi, "EXEC"), []step{flush})},
		{"pipelined transactions, EXEC refused", "exec",
			seq([]step{send("WATCH", key)}, tx(multi, "EXEC"), tx(multi, "EXEC"), []step{flush})},
		{"pipelined transactions, EXEC refused, then DISCARD", "exec",
			seq([]step{send("WATCH", key)}, tx(multi, "EXEC"), tx(multi, "DISCARD"), []step{flush})},
		{"pipelined transactions, DISCARD refused", "discard",
			seq([]step{send("WATCH", key)}, tx(multi, "DISCARD"), tx(multi, "DISCARD"), []step{flush})},
		{"pipelined EXEC with an argument, then a transaction", "",
			seq([]step{send("WATCH", key)}, tx(multi, "EXEC", "x"), tx(multi, "EXEC"), []step{flush})},
		{"pipelined EXEC with an argument, DISCARD, WATCH", "",
			seq([]step{send("WATCH", key2)}, tx(multi, "EXEC", "x"), []step{send("DISCARD"), send("WATCH", key), flush})},
		{"pipelined MULTI with an argument, RESET, transaction", "",
			seq([]step{send("WATCH", key)}, tx(badMulti, "EXEC"), []step{send("RESET"), send("WATCH", key)}, tx(multi, "EXEC"), []step{flush})},
		{"pipelined transaction, DISCARD, MULTI with an argument, WATCH", "",
			seq(tx(multi, "DISCARD"), []step{send("MULTI", "x"), send("WATCH", key), flush})},
	}
	for _, b := range borrowers {
		for _, tt := range tests {
			t.Run(b.name+"/"+tt.name, func(t *testing.T) {
				checkTxStateNotHandedOn(t, admin, srv.Addr, b.get, user, pass, tt.deny, tt.steps, []string{key, key2}, "review15:pipelinedtx:next")
			})
		}
	}
}
