package command_test

import (
	"testing"

	"github.com/shardis/shardis/shard/command"
)

// The commands that may make the server close the connection that sent
// them (CLIENT KILL in every form, whose filter may match the sender; ACL
// DELUSER and ACL LOAD, which drop the clients of the users they remove)
// are not stateless: a pool must not hand their connection on. The other
// ACL and CLIENT subcommands are.
func TestReview15EffectOfCommandsThatMayCloseTheirConnection(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []any
		want command.ConnEffect
	}{
		{"CLIENT", []any{"KILL", "127.0.0.1:5000"}, command.Disconnects},
		{"client", []any{[]byte("kill"), "127.0.0.1:5000"}, command.Disconnects},
		{"CLIENT", []any{"KILL", "ID", "7", "SKIPME", "no"}, command.Disconnects},
		{"CLIENT", []any{"Kill", "USER", "app"}, command.Disconnects},
		{"CLIENT", []any{"KILL", "TYPE", "normal", "SKIPME", "yes"}, command.Disconnects},
		{"CLIENT", []any{"KILL"}, command.Disconnects},
		{"ACL", []any{"DELUSER", "app"}, command.Disconnects},
		{"acl", []any{[]byte("deluser"), "a", "b"}, command.Disconnects},
		{"ACL", []any{"LOAD"}, command.Disconnects},
		{"ACL", []any{"load"}, command.Disconnects},
		{"ACL", []any{"LIST"}, command.Stateless},
		{"ACL", []any{"WHOAMI"}, command.Stateless},
		{"ACL", []any{"SETUSER", "app", "on"}, command.Stateless},
		{"ACL", []any{"SAVE"}, command.Stateless},
		{"ACL", nil, command.Stateless},
		{"CLIENT", []any{"LIST"}, command.Stateless},
		{"CLIENT", []any{"ID"}, command.Stateless},
		{"GET", []any{"kill"}, command.Stateless},
	} {
		if got := command.EffectOf(nil, tc.name, tc.args); got != tc.want {
			t.Errorf("EffectOf(%s %v) = %v, want %v", tc.name, tc.args, got, tc.want)
		}
		if info := command.Lookup(tc.name); info != nil {
			if got := command.EffectOf(info, tc.name, tc.args); got != tc.want {
				t.Errorf("EffectOf(info, %s %v) = %v, want %v", tc.name, tc.args, got, tc.want)
			}
		}
	}
	if got := command.Disconnects.String(); got != "disconnects" {
		t.Errorf("Disconnects.String() = %q", got)
	}
}
