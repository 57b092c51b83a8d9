package command

import (
	"bytes"
	"testing"
)

// r21Word is an argument of a type of the caller's own that redigo sends
// as fmt prints it: its String method's text.
type r21Word struct{ s string }

func (w r21Word) String() string { return w.s }

// r21Ptr is a pointer type whose String method gives the text sent.
type r21Ptr struct{ b bytes.Buffer }

func (p *r21Ptr) String() string { return p.b.String() }

// TestReview21EffectReadsArgsAsSent: a subcommand given as a value that
// fmt prints (a Stringer, a pointer with a String method, a
// redis.Argument of one) is the word the server receives, and classes
// the command as that word does; one the server receives as no
// subcommand of the kind keeps it Stateless.
func TestReview21EffectReadsArgsAsSent(t *testing.T) {
	ptr := &r21Ptr{}
	ptr.b.WriteString("setname")
	tests := []struct {
		name string
		cmd  string
		args []any
		want ConnEffect
	}{
		{"CLIENT Stringer SETNAME", "CLIENT", []any{r21Word{"SETNAME"}, "x"}, SetsState},
		{"CLIENT pointer SETNAME", "CLIENT", []any{ptr, "x"}, SetsState},
		{"CLIENT Argument of a Stringer TRACKING", "client", []any{tagged{r21Word{"tracking"}}, "on"}, SetsState},
		{"CLIENT Stringer REPLY OFF", "CLIENT", []any{r21Word{"REPLY"}, r21Word{"OFF"}}, Exclusive},
		{"CLIENT Stringer REPLY ON", "CLIENT", []any{r21Word{"REPLY"}, r21Word{"on"}}, Stateless},
		{"CLIENT Stringer KILL", "CLIENT", []any{r21Word{"KILL"}, "ID", 1}, Disconnects},
		{"CLIENT Stringer ID", "CLIENT", []any{r21Word{"ID"}}, Stateless},
		{"SCRIPT Stringer DEBUG", "SCRIPT", []any{r21Word{"DEBUG"}, "YES"}, SetsState},
		{"SCRIPT DEBUG Stringer NO", "SCRIPT", []any{"DEBUG", r21Word{"NO"}}, Stateless},
		{"ACL Stringer DELUSER", "ACL", []any{r21Word{"DELUSER"}, "u"}, Disconnects},
		{"HELLO Stringer 2", "HELLO", []any{r21Word{"2"}}, Stateless},
	}
	for _, tt := range tests {
		if got := EffectOf(nil, tt.cmd, tt.args); got != tt.want {
			t.Errorf("%s: EffectOf = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestReview21ArgText: ArgText is Arg's text where Arg knows the type,
// and else what fmt prints, as redigo sends it (a redis.Argument by its
// RedisArg value).
func TestReview21ArgText(t *testing.T) {
	ptr := &r21Ptr{}
	ptr.b.WriteString("SETNAME")
	tests := []struct {
		in   any
		want string
	}{
		{"text", "text"},
		{[]byte("b"), "b"},
		{42, "42"},
		{true, "1"},
		{nil, ""},
		{tagged{"inner"}, "inner"},
		{r21Word{"BLOCK"}, "BLOCK"},
		{ptr, "SETNAME"},
		{tagged{r21Word{"w"}}, "w"},
		{tagged{tagged{"x"}}, "{x}"},
		{struct{}{}, "{}"},
		{[]string{"a", "b"}, "[a b]"},
	}
	for _, tt := range tests {
		if got := ArgText(tt.in); got != tt.want {
			t.Errorf("ArgText(%#v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
