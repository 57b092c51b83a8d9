package command_test

import (
	"testing"

	"github.com/shardis/shardis/shard/command"
)

func TestEffectOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []any
		want command.ConnEffect
	}{
		{"GET", []any{"k"}, command.Stateless},
		{"get", []any{"k"}, command.Stateless},
		{"PUBLISH", []any{"ch", "m"}, command.Stateless},
		{"SPUBLISH", []any{"ch", "m"}, command.Stateless},
		{"SUBSCRIBE", []any{"ch"}, command.Subscribe},
		{"psubscribe", []any{"ch*"}, command.Subscribe},
		{"SSubscribe", []any{"ch"}, command.Subscribe},
		{"UNSUBSCRIBE", nil, command.Subscribe},
		{"PUNSUBSCRIBE", nil, command.Subscribe},
		{"SUNSUBSCRIBE", nil, command.Subscribe},
		{"MONITOR", nil, command.Exclusive},
		{"CLIENT", []any{"REPLY", "OFF"}, command.Exclusive},
		{"CLIENT", []any{"reply", []byte("skip")}, command.Exclusive},
		{"CLIENT", []any{"REPLY", "ON"}, command.Stateless},
		{"CLIENT", []any{"GETNAME"}, command.Stateless},
		{"CLIENT", []any{"LIST"}, command.Stateless},
		{"CLIENT", nil, command.Stateless},
		{"CLIENT", []any{"SETNAME", "x"}, command.SetsState},
		{"CLIENT", []any{"SETINFO", "lib-name", "x"}, command.SetsState},
		{"CLIENT", []any{"TRACKING", "ON"}, command.SetsState},
		{"CLIENT", []any{"CACHING", "YES"}, command.SetsState},
		{"CLIENT", []any{"NO-EVICT", "ON"}, command.SetsState},
		{"CLIENT", []any{"NO-TOUCH", "ON"}, command.SetsState},
		{"SELECT", []any{1}, command.Database},
		{"HELLO", nil, command.Stateless},
		{"HELLO", []any{2}, command.Stateless},
		{"HELLO", []any{"2", "SETNAME", "x"}, command.SetsState},
		{"HELLO", []any{2, "AUTH", "u", "p"}, command.SetsState},
		{"HELLO", []any{3}, command.Protocol},
		{"HELLO", []any{"3", "AUTH", "u", "p"}, command.Protocol},
		{"WATCH", []any{"k"}, command.Transaction},
		{"UNWATCH", nil, command.Transaction},
		{"MULTI", nil, command.Transaction},
		{"EXEC", nil, command.Transaction},
		{"DISCARD", nil, command.Transaction},
		{"AUTH", []any{"p"}, command.SetsState},
		{"READONLY", nil, command.SetsState},
		{"READWRITE", nil, command.SetsState},
		{"RESET", nil, command.SetsState},
		{"QUIT", nil, command.SetsState},
		{"ASKING", nil, command.SetsState},
		{"NOSUCHCOMMAND", nil, command.Stateless},
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
}

func TestEffectOfDoesNotAllocate(t *testing.T) {
	info := command.Lookup("CLIENT")
	args := []any{"SETNAME", "x"}
	get := []any{"k"}
	n := testing.AllocsPerRun(100, func() {
		command.EffectOf(info, "CLIENT", args)
		command.EffectOf(nil, "get", get)
	})
	if n != 0 {
		t.Errorf("%v allocations per call", n)
	}
}
