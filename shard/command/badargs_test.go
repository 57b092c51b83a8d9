package command

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"
)

var badCases = []struct {
	name   string
	args   []any
	err    error
	reason string // a word the message must contain
	server bool   // the server must refuse to run this call too
}{
	{"GET", nil, ErrBadArgs, "arguments", true},
	{"GET", args("a", "b"), ErrBadArgs, "arguments", true},
	{"SET", args("k"), ErrBadArgs, "arguments", true},
	{"MSET", nil, ErrBadArgs, "arguments", true},
	{"MSET", args("k"), ErrBadArgs, "arguments", true},
	{"BITOP", args("AND", "d"), ErrBadArgs, "arguments", true},
	{"EVAL", args("return 1"), ErrBadArgs, "arguments", true},
	{"EVAL", args("return 1", -1), ErrBadArgs, "negative", true},
	{"EVAL", args("return 1", "-1", "a"), ErrBadArgs, "negative", true},
	{"EVAL", args("return 1", "x", "a"), ErrBadArgs, "not an integer", true},
	{"EVAL", args("return 1", "", "a"), ErrBadArgs, "not an integer", true},
	{"EVAL", args("return 1", "01", "a"), ErrBadArgs, "not an integer", true},
	{"EVAL", args("return 1", "+1", "a"), ErrBadArgs, "not an integer", true},
	{"EVAL", args("return 1", " 1", "a"), ErrBadArgs, "not an integer", true},
	{"EVAL", args("return 1", "-0", "a"), ErrBadArgs, "not an integer", true},
	{"EVAL", args("return 1", 1.5, "a"), ErrBadArgs, "not an integer", true},
	{"EVAL", args("return 1", "9223372036854775808", "a"), ErrBadArgs, "not an integer", true},
	{"EVAL", args("return 1", 5, "a"), ErrBadArgs, "exceeds", true},
	{"EVAL", args("return 1", 2, "a"), ErrBadArgs, "exceeds", true},
	{"EVAL", args("return 1", uint64(math.MaxUint64), "a"), ErrBadArgs, "exceeds", true},
	{"EVAL", args("return 1", int64(math.MaxInt64)), ErrBadArgs, "exceeds", true},
	{"EVAL", args("return 1", struct{}{}, "a"), ErrBadArgs, "not an integer", false},
	{"EVALSHA", args("e0e1f9fabfc9d4800c877a703b823ac0578ff831", -2), ErrBadArgs, "negative", true},
	{"FCALL", args("f", -3), ErrBadArgs, "negative", false},
	{"FCALL_RO", args("f", 4, "a"), ErrBadArgs, "exceeds", false},
	{"ZUNIONSTORE", args("d", 0, "a"), ErrBadArgs, "positive", true},
	{"ZUNIONSTORE", args("d", 3, "a", "b"), ErrBadArgs, "exceeds", true},
	{"ZUNIONSTORE", args("d", "two", "a", "b"), ErrBadArgs, "not an integer", true},
	{"ZUNION", args(0, "a"), ErrBadArgs, "positive", true},
	{"ZINTER", args(-1, "a"), ErrBadArgs, "negative", true},
	{"LMPOP", args(0, "a", "LEFT"), ErrBadArgs, "positive", true},
	{"LMPOP", args(-1, "a", "LEFT"), ErrBadArgs, "negative", true},
	{"LMPOP", args(3, "a", "LEFT"), ErrBadArgs, "exceeds", true},
	{"BLMPOP", args(0, "x", "a", "LEFT"), ErrBadArgs, "not an integer", true},
	{"SINTERCARD", args(2, "a"), ErrBadArgs, "exceeds", true},
	{"XREAD", args("COUNT", 1, "BLOCK", 0), ErrBadArgs, "no key", true},
	{"XREAD", args("COUNT", 1, "STREAMS", "a"), ErrBadArgs, "outside", true},
	{"XREADGROUP", args("GROUP", "g", "c", "STREAMS", "s"), ErrBadArgs, "arguments", true},
	{"MIGRATE", args("127.0.0.1", 1, "key", 0, 5000, "KEYS", "a"), ErrBadArgs, "no key", true},
	{"OBJECT", nil, ErrBadArgs, "arguments", true},
	{"OBJECT", args("ENCODING"), ErrBadArgs, "arguments", true},
	{"OBJECT", args("ENCODING", "a", "b"), ErrBadArgs, "arguments", true},
	{"OBJECT", args("NOSUCH", "k"), ErrUnknownCommand, "unknown subcommand", true},
	{"OBJECT", args(struct{}{}, "k"), ErrUnknownCommand, "unknown subcommand", false},
	{"OBJECT", args(nil, "k"), ErrUnknownCommand, "unknown subcommand", false},
	{"nosuchcommand", args("k"), ErrUnknownCommand, "unknown command", false},
}

func TestKeyPositionsBadArgs(t *testing.T) {
	for _, tc := range badCases {
		t.Run(tc.name+" "+fmt.Sprint(tc.args...), func(t *testing.T) {
			dst := []int{42}
			got, err := Lookup(tc.name).KeyPositions(tc.args, dst)
			if !errors.Is(err, tc.err) {
				t.Fatalf("KeyPositions = %v, %v; want %v", got, err, tc.err)
			}
			if len(got) != 1 || got[0] != 42 {
				t.Errorf("dst changed to %v on error", got)
			}
			var ae *ArgsError
			if !errors.As(err, &ae) {
				t.Fatalf("error %T is not *ArgsError", err)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "shardis: ") || !strings.Contains(msg, tc.reason) {
				t.Errorf("message %q: want the shardis: prefix and %q", msg, tc.reason)
			}
			if info := Lookup(tc.name); info != nil && !strings.Contains(msg, strings.ToUpper(info.Name)) {
				t.Errorf("message %q does not name the command", msg)
			}
		})
	}
}

// TestBadArgsRefusedByServer runs the bad calls on a real server: each one
// that KeyPositions refuses, the server refuses too, so refusing them early
// loses nothing.
func TestBadArgsRefusedByServer(t *testing.T) {
	c := dialServer(t)
	for _, tc := range badCases {
		if !tc.server {
			continue
		}
		reply, err := c.Do(tc.name, tc.args...)
		var re redis.Error
		if !errors.As(err, &re) {
			t.Errorf("%s %v: server replied %v, %v; want an error reply", tc.name, tc.args, reply, err)
		}
	}
}

// TestKeyPositionsNilInfo: methods on a nil *Info (an unknown command) do
// not panic.
func TestKeyPositionsNilInfo(t *testing.T) {
	var info *Info
	if info.HasKeys() || info.IsWrite() || info.IsReadOnly() || info.IsContainer() ||
		info.Subcommand("x") != nil || info.Resolve(args("x")) != nil {
		t.Error("nil Info reports something")
	}
	if _, err := info.KeyPositions(args("k"), nil); !errors.Is(err, ErrUnknownCommand) || err.Error() != "shardis: unknown command" {
		t.Errorf("KeyPositions on nil = %v", err)
	}
	if _, err := info.ChannelPositions(nil, nil); !errors.Is(err, ErrUnknownCommand) {
		t.Errorf("ChannelPositions on nil = %v", err)
	}
}
