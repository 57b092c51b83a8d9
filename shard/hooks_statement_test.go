package shard

import "testing"

func TestStatementHidesSecrets(t *testing.T) {
	cases := []struct {
		name string
		args []any
		max  int
		want string
	}{
		{"GET", []any{"k"}, 0, "GET k"},
		{"AUTH", []any{"pw"}, 0, "AUTH ?"},
		{"auth", []any{"user", "pw"}, 0, "auth ? ?"},
		{"HELLO", []any{"3", "AUTH", "user", "pw", "SETNAME", "app"}, 0, "HELLO 3 AUTH ? ? SETNAME app"},
		{"HELLO", []any{"3"}, 0, "HELLO 3"},
		{"MIGRATE", []any{"h", 6379, "", 0, 5000, "AUTH", "pw", "KEYS", "a"}, 0, "MIGRATE h 6379  0 5000 AUTH ? KEYS a"},
		{"MIGRATE", []any{"h", 6379, "k", 0, 5000, "AUTH2", "u", "pw"}, 0, "MIGRATE h 6379 k 0 5000 AUTH2 ? ?"},
		{"ACL", []any{"SETUSER", "bob", "on", ">pw", "~*"}, 0, "ACL SETUSER bob ? ? ?"},
		{"CONFIG", []any{"SET", "requirepass", "pw", "maxmemory", "1mb"}, 0, "CONFIG SET requirepass ? maxmemory ?"},
		{"CONFIG", []any{"GET", "requirepass"}, 0, "CONFIG GET requirepass"},
		{"SET", []any{"k", []byte("bin\x00ary")}, 0, "SET k ?"},
		{"SET", []any{"k", 42, 1.5}, 0, "SET k 42 1.5"},
		{"SET", []any{"k", "0123456789"}, 12, "SET k 012..."},
		{"SET", []any{"k", "ééééé"}, 11, "SET k é..."},
	}
	for _, tc := range cases {
		if got := statement(tc.name, tc.args, tc.max); got != tc.want {
			t.Errorf("statement(%q, %q, %d) = %q, want %q", tc.name, tc.args, tc.max, got, tc.want)
		}
		if tc.max > 0 && len(statement(tc.name, tc.args, tc.max)) > tc.max {
			t.Errorf("statement(%q) longer than %d", tc.name, tc.max)
		}
	}
}

func TestPipelineStatementIsBounded(t *testing.T) {
	var calls []*call
	for range 1000 {
		calls = append(calls, &call{name: "SET", args: []any{"key", "value"}})
	}
	got := pipelineStatement(calls, 100)
	if len(got) != 100 || got[97:] != "..." {
		t.Fatalf("got %d bytes %q", len(got), got)
	}
	if got := pipelineStatement(calls[:2], 0); got != "SET key value\nSET key value" {
		t.Fatalf("got %q", got)
	}
}

func FuzzStatement(f *testing.F) {
	f.Add("HELLO", "3", "AUTH", "u", "p", 10)
	f.Add("AUTH", "p", "", "", "", 0)
	f.Fuzz(func(t *testing.T, name, a, b, c, d string, max int) {
		max %= 1 << 12
		s := statement(name, []any{a, b, c, d}, max)
		if max > 0 && len(s) > max {
			t.Fatalf("%d bytes > %d", len(s), max)
		}
		if max <= 0 || len(name)+8 <= max {
			// Nothing of AUTH's arguments is shown.
			if (name == "AUTH" || name == "auth") && s != name+" ? ? ? ?" {
				t.Fatalf("AUTH shown as %q", s)
			}
		}
	})
}
