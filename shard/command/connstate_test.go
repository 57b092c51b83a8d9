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
		{"SYNC", nil, command.Exclusive},
		{"psync", []any{"?", -1}, command.Exclusive},
		{"REPLCONF", []any{"ACK", "0"}, command.Exclusive},
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
		{"CLIENT", []any{"NO-TOUCH", "OFF"}, command.SetsState},
		{"CLIENT", []any{"SETINFO", "LIB-VER", "1.0"}, command.SetsState},
		{"CLIENT", []any{"TRACKING", "ON", "REDIRECT", 7, "BCAST", "PREFIX", "p:"}, command.SetsState},
		{"CLIENT", []any{"TRACKING", "OFF"}, command.SetsState},
		{"CLIENT", []any{"CAPA", "redirect"}, command.SetsState},
		{"client", []any{[]byte("capa"), []byte("REDIRECT")}, command.SetsState},
		{"CLIENT", []any{"IMPORT-SOURCE", "ON"}, command.SetsState},
		{"CLIENT", []any{"import-source", "off"}, command.SetsState},
		{"SCRIPT", []any{"DEBUG", "YES"}, command.SetsState},
		{"script", []any{[]byte("debug"), "sync"}, command.SetsState},
		{"SCRIPT", []any{"DEBUG", "NO"}, command.Stateless},
		{"SCRIPT", []any{"LOAD", "return 1"}, command.Stateless},
		{"SCRIPT", nil, command.Stateless},
		{"SELECT", []any{1}, command.Database},
		{"HELLO", nil, command.Stateless},
		{"HELLO", []any{2}, command.Stateless},
		{"HELLO", []any{"2", "SETNAME", "x"}, command.SetsState},
		{"HELLO", []any{2, "AUTH", "u", "p"}, command.SetsState},
		{"HELLO", []any{3}, command.Protocol},
		{"HELLO", []any{"3", "AUTH", "u", "p"}, command.Protocol},
		{"HELLO", []any{"3", "SETNAME", "x"}, command.Protocol},
		{"SUBSCRIBE", []any{"a", "b"}, command.Subscribe},
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

// EffectOf never panics, agrees with itself given the looked-up entry,
// and calls a command stateless only when it is none of the listed ones.
func FuzzEffectOf(f *testing.F) {
	for _, seed := range [][3]string{
		{"CLIENT", "REPLY", "OFF"}, {"client", "setname", "x"}, {"HELLO", "3", ""},
		{"HELLO", "2", "AUTH"}, {"SELECT", "1", ""}, {"GET", "k", ""}, {"ssubscribe", "ch", ""},
	} {
		f.Add(seed[0], seed[1], seed[2])
	}
	f.Fuzz(func(t *testing.T, name, a, b string) {
		args := []any{a, []byte(b)}
		e := command.EffectOf(nil, name, args)
		if e > command.Exclusive {
			t.Fatalf("EffectOf(%q) = %d", name, e)
		}
		if info := command.Lookup(name); info != nil {
			if e2 := command.EffectOf(info, name, args); e2 != e {
				t.Fatalf("EffectOf(%q): %v without the entry, %v with it", name, e, e2)
			}
		} else if e != command.Stateless {
			t.Fatalf("EffectOf(%q) = %v for a command the table does not know", name, e)
		}
	})
}

func BenchmarkEffectOf(b *testing.B) {
	get, client := command.Lookup("GET"), command.Lookup("CLIENT")
	getArgs, clientArgs := []any{"k"}, []any{"SETNAME", "x"}
	b.Run("GET", func(b *testing.B) {
		for b.Loop() {
			command.EffectOf(get, "GET", getArgs)
		}
	})
	b.Run("CLIENT SETNAME", func(b *testing.B) {
		for b.Loop() {
			command.EffectOf(client, "CLIENT", clientArgs)
		}
	})
}
