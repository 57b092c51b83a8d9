package command_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/shardis/shardis/shard/command"
)

type (
	cmdWord  string
	count    int32
	flag     bool
	ratio    float64
	shout    string
	rawBytes []byte
)

func (s shout) String() string { return "LOUD-" + string(s) }

// Arg gives, for a type of its own over a scalar, the text the encoder
// sends for it (fmt's), and still refuses other types.
func TestArgOfNamedScalarTypes(t *testing.T) {
	for _, tc := range []struct {
		arg  any
		want string
		ok   bool
	}{
		{cmdWord("REPLY"), "REPLY", true},
		{count(-12), "-12", true},
		{flag(true), "true", true}, // fmt's text, not redigo's "1" for a plain bool
		{ratio(1.5), "1.5", true},
		{shout("x"), "LOUD-x", true}, // a String method wins, as in fmt
		{rawBytes("ab"), "", false},
		{struct{}{}, "", false},
	} {
		got, ok := command.Arg(tc.arg)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Arg(%T %v) = %q, %v; want %q, %v", tc.arg, tc.arg, got, ok, tc.want, tc.ok)
		}
		if ok {
			var b bytes.Buffer
			fmt.Fprint(&b, tc.arg) // what is written on the wire
			if b.String() != got {
				t.Errorf("Arg(%T) = %q, but %q is sent", tc.arg, got, b.String())
			}
		}
	}
}
