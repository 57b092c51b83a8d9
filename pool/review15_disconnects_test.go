package pool

import (
	"testing"

	"github.com/shardis/shardis/shard/command"
)

// The pool retires a connection after each command that command.EffectOf
// says may close it (command.Disconnects), and only after those of the
// CLIENT and ACL subcommands that change nothing: the rule is EffectOf's,
// not a copy of it.
func TestReview15LeavesStateForCommandsThatMayCloseTheirConnection(t *testing.T) {
	for _, tc := range []struct {
		cmd  string
		args []any
		want bool
	}{
		{"CLIENT", []any{"KILL", "127.0.0.1:5000"}, true},
		{"client", []any{[]byte("KILL"), "ID", "3"}, true},
		{"CLIENT", []any{"KILL", "USER", "app", "SKIPME", "yes"}, true},
		{"ACL", []any{"DELUSER", "app"}, true},
		{"acl", []any{[]byte("load")}, true},
		{"ACL", []any{"LIST"}, false},
		{"ACL", []any{"SETUSER", "app", "on"}, false},
		{"ACL", nil, false},
		{"CLIENT", []any{"LIST"}, false},
	} {
		if got := leavesState(tc.cmd, tc.args); got != tc.want {
			t.Errorf("leavesState(%s %v) = %t, want %t", tc.cmd, tc.args, got, tc.want)
		}
		eff := command.EffectOf(nil, tc.cmd, tc.args)
		if (eff == command.Disconnects) != tc.want {
			t.Errorf("EffectOf(%s %v) = %v: the pool's rule and EffectOf's differ", tc.cmd, tc.args, eff)
		}
	}
}
