package command

import "testing"

// wordOf is a command word given as a Stringer over a struct: redigo sends
// its String method's text.
type wordOf struct{ w string }

func (w wordOf) String() string { return w.w }

// TestReview21StringerSubcommandResolves: a container's subcommand given
// as a Stringer is the subcommand the server runs, so Resolve finds its
// entry (flags, keys, arity) rather than none.
func TestReview21StringerSubcommandResolves(t *testing.T) {
	tests := []struct {
		cmd  string
		sub  any
		want string
	}{
		{"CLIENT", wordOf{"SETNAME"}, "client|setname"},
		{"client", wordOf{"tracking"}, "client|tracking"},
		{"CONFIG", wordOf{"Set"}, "config|set"},
		{"OBJECT", wordOf{"ENCODING"}, "object|encoding"},
	}
	for _, tt := range tests {
		info := Lookup(tt.cmd)
		if info == nil {
			t.Fatalf("Lookup(%q) = nil", tt.cmd)
		}
		got := info.Resolve([]any{tt.sub, "x"})
		if got == nil {
			t.Errorf("%s %v: Resolve = nil, want %s", tt.cmd, tt.sub, tt.want)
			continue
		}
		if got.Name != tt.want {
			t.Errorf("%s %v: Resolve = %s, want %s", tt.cmd, tt.sub, got.Name, tt.want)
		}
	}
	if got := Lookup("CLIENT").Resolve([]any{wordOf{"NOSUCH"}}); got != nil {
		t.Errorf("an unknown Stringer subcommand resolved to %s", got.Name)
	}
}
