package command

import (
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"
)

func args(xs ...any) []any { return xs }

// keyCases are real invocations with the key positions they must give;
// TestKeyPositionsMatchServer also checks each against COMMAND GETKEYS.
var keyCases = []struct {
	name string
	args []any
	want []int
}{
	{"GET", args("k"), []int{0}},
	{"get", args([]byte("bytes-key")), []int{0}},
	{"SET", args("k", "v"), []int{0}},
	{"SET", args("k", "v", "GET", "EX", 10), []int{0}},
	{"MSET", args("k1", "v1", "k2", "v2", "k3", "v3"), []int{0, 2, 4}},
	{"MSETNX", args("k1", "v1", "k2", "v2"), []int{0, 2}},
	{"MGET", args("k1", "k2", "k3"), []int{0, 1, 2}},
	{"DEL", args("a", "b", "c"), []int{0, 1, 2}},
	{"UNLINK", args("a", "b"), []int{0, 1}},
	{"EXISTS", args("a", "b", "c"), []int{0, 1, 2}},
	{"TOUCH", args("a", "b"), []int{0, 1}},
	{"WATCH", args("a", "b"), []int{0, 1}},
	{"EVAL", args("return 1", 0), []int{}},
	{"EVAL", args("return 1", "1", "k1", "arg"), []int{2}},
	{"EVAL", args("return 1", 3, "k1", "k2", "k3", "a1", "a2"), []int{2, 3, 4}},
	{"EVAL", args("return 1", int64(2), []byte("k1"), "k2"), []int{2, 3}},
	{"EVALSHA", args("e0e1f9fabfc9d4800c877a703b823ac0578ff831", "0"), []int{}},
	{"EVALSHA", args("e0e1f9fabfc9d4800c877a703b823ac0578ff831", "1", "k1"), []int{2}},
	{"EVALSHA", args("e0e1f9fabfc9d4800c877a703b823ac0578ff831", "3", "k1", "k2", "k3", "x"), []int{2, 3, 4}},
	{"EVAL_RO", args("return 1", 2, "k1", "k2"), []int{2, 3}},
	{"EVALSHA_RO", args("e0e1f9fabfc9d4800c877a703b823ac0578ff831", 1, "k1"), []int{2}},
	{"FCALL", args("f", 0), []int{}},
	{"FCALL", args("f", 1, "k1", "a"), []int{2}},
	{"FCALL", args("f", 3, "k1", "k2", "k3"), []int{2, 3, 4}},
	{"FCALL_RO", args("f", 2, "k1", "k2", "a"), []int{2, 3}},
	{"ZUNIONSTORE", args("dst", 2, "a", "b", "WEIGHTS", 1, 2), []int{0, 2, 3}},
	{"ZINTERSTORE", args("dst", 3, "a", "b", "c", "AGGREGATE", "MAX"), []int{0, 2, 3, 4}},
	{"ZDIFFSTORE", args("dst", 2, "a", "b"), []int{0, 2, 3}},
	{"ZUNION", args(2, "a", "b", "WITHSCORES"), []int{1, 2}},
	{"ZINTER", args(3, "a", "b", "c"), []int{1, 2, 3}},
	{"ZINTER", args(1, "a"), []int{1}},
	{"ZDIFF", args(2, "a", "b"), []int{1, 2}},
	{"ZINTERCARD", args(2, "a", "b", "LIMIT", 5), []int{1, 2}},
	{"SINTERCARD", args(3, "a", "b", "c", "LIMIT", 1), []int{1, 2, 3}},
	{"SINTERCARD", args(1, "a"), []int{1}},
	{"LMPOP", args(2, "a", "b", "LEFT", "COUNT", 3), []int{1, 2}},
	{"LMPOP", args(1, "a", "RIGHT"), []int{1}},
	{"BLMPOP", args(0.5, 3, "a", "b", "c", "RIGHT"), []int{2, 3, 4}},
	{"ZMPOP", args(1, "a", "MIN"), []int{1}},
	{"BZMPOP", args(1, 2, "a", "b", "MAX", "COUNT", 2), []int{2, 3}},
	{"XREAD", args("STREAMS", "s1", "s2", "0", "0"), []int{1, 2}},
	{"XREAD", args("COUNT", 10, "BLOCK", 100, "STREAMS", "s1", "$"), []int{5}},
	{"XREAD", args("streams", "STREAMS", "0"), []int{1}},
	{"XREADGROUP", args("GROUP", "g", "c", "STREAMS", "s1", "s2", ">", ">"), []int{4, 5}},
	{"XREADGROUP", args("GROUP", "g", "c", "COUNT", 1, "NOACK", "STREAMS", "s1", ">"), []int{7}},
	{"SORT", args("src"), []int{0}},
	{"SORT", args("src", "BY", "w_*", "LIMIT", 0, 10, "GET", "o_*", "ALPHA", "STORE", "dst"), []int{0, 10}},
	{"SORT", args("src", "STORE", "d1", "STORE", "d2"), []int{0, 4}},
	{"SORT", args("src", "GET", "store", "STORE", "dst"), []int{0, 4}},
	{"SORT", args("src", "ALPHA", "STORE"), []int{0}},
	{"SORT_RO", args("src", "BY", "w_*", "GET", "#"), []int{0}},
	{"GEORADIUS", args("g", 15, 37, 200, "km", "STORE", "dst"), []int{0, 6}},
	{"GEORADIUS", args("g", 15, 37, 200, "km", "STOREDIST", "dd"), []int{0, 6}},
	{"GEORADIUS", args("g", 15, 37, 200, "km", "WITHDIST", "ASC"), []int{0}},
	{"GEORADIUS", args("g", 15, 37, 200, "km", "STORE", "d1", "STOREDIST", "d2"), []int{0, 6, 8}},
	{"GEORADIUSBYMEMBER", args("g", "m", 100, "km", "STORE", "dst"), []int{0, 5}},
	{"GEORADIUS_RO", args("g", 15, 37, 200, "km"), []int{0}},
	{"GEOSEARCHSTORE", args("dst", "src", "FROMMEMBER", "m", "BYRADIUS", 1, "km"), []int{0, 1}},
	{"MIGRATE", args("127.0.0.1", 6379, "key", 0, 5000), []int{2}},
	{"MIGRATE", args("127.0.0.1", 6379, "", 0, 5000, "KEYS", "k1", "k2", "k3"), []int{6, 7, 8}},
	{"MIGRATE", args("127.0.0.1", 6379, "", 0, 5000, "COPY", "REPLACE", "AUTH", "pw", "KEYS", "k1", "k2"), []int{10, 11}},
	{"MIGRATE", args("127.0.0.1", 6379, "", 0, 5000, "AUTH2", "user", "KEYS", "KEYS", "k1"), []int{9}},
	{"MIGRATE", args("127.0.0.1", 6379, "KEYS", 0, 5000), []int{2}},
	{"OBJECT", args("ENCODING", "k"), []int{1}},
	{"object", args("encoding", "k"), []int{1}},
	{"OBJECT", args("FREQ", "k"), []int{1}},
	{"MEMORY", args("USAGE", "k", "SAMPLES", 5), []int{1}},
	{"MEMORY", args([]byte("usage"), "k"), []int{1}},
	{"XINFO", args("STREAM", "s", "FULL"), []int{1}},
	{"XINFO", args("GROUPS", "s"), []int{1}},
	{"XINFO", args("CONSUMERS", "s", "g"), []int{1}},
	{"XGROUP", args("CREATE", "s", "g", "$", "MKSTREAM"), []int{1}},
	{"BITOP", args("AND", "dst", "a", "b", "c"), []int{1, 2, 3, 4}},
	{"BITFIELD", args("k", "GET", "u8", 0), []int{0}},
	{"BITFIELD_RO", args("k", "GET", "u8", 0), []int{0}},
	{"RENAME", args("a", "b"), []int{0, 1}},
	{"RENAMENX", args("a", "b"), []int{0, 1}},
	{"SMOVE", args("src", "dst", "m"), []int{0, 1}},
	{"LMOVE", args("src", "dst", "LEFT", "RIGHT"), []int{0, 1}},
	{"BLMOVE", args("src", "dst", "LEFT", "RIGHT", 0), []int{0, 1}},
	{"BRPOPLPUSH", args("src", "dst", 0), []int{0, 1}},
	{"BLPOP", args("a", "b", "c", 0), []int{0, 1, 2}},
	{"BZPOPMIN", args("a", "b", 0), []int{0, 1}},
	{"COPY", args("src", "dst", "DB", 1, "REPLACE"), []int{0, 1}},
	{"PFCOUNT", args("a", "b", "c"), []int{0, 1, 2}},
	{"PFMERGE", args("dst", "a", "b"), []int{0, 1, 2}},
	{"SUNIONSTORE", args("dst", "a", "b"), []int{0, 1, 2}},
	{"SINTERSTORE", args("dst", "a", "b"), []int{0, 1, 2}},
	{"SDIFF", args("a", "b"), []int{0, 1}},
	{"ZRANGESTORE", args("dst", "src", 0, -1), []int{0, 1}},
	{"GETEX", args("k", "PERSIST"), []int{0}},
	{"SETRANGE", args("k", 0, "v"), []int{0}},
	{"LCS", args("a", "b", "LEN"), []int{0, 1}},
	{"XADD", args("s", "*", "f", "v"), []int{0}},
	{"XCLAIM", args("s", "g", "c", 0, "0-1"), []int{0}},
	{"HSET", args("h", "f", "v", "f2", "v2"), []int{0}},
	{"RESTORE", args("k", 0, "payload"), []int{0}},
	{"INCRBYFLOAT", args("k", 1.5), []int{0}},
	{"SETBIT", args("k", 7, true), []int{0}},
}

// TestKeyPositionsMatchServer checks the table of invocations against the
// expected positions and against COMMAND GETKEYS on a real server.
func TestKeyPositionsMatchServer(t *testing.T) {
	if len(keyCases) < 60 {
		t.Fatalf("only %d cases", len(keyCases))
	}
	c := dialServer(t)
	for _, tc := range keyCases {
		t.Run(tc.name+" "+fmt.Sprint(tc.args...), func(t *testing.T) {
			pos, keys, err := ourKeys(tc.name, tc.args)
			if err != nil {
				t.Fatalf("KeyPositions: %v", err)
			}
			if !slices.Equal(pos, tc.want) {
				t.Errorf("KeyPositions = %v, want %v", pos, tc.want)
			}
			server, err := serverKeys(t, c, tc.name, tc.args)
			if err != nil {
				t.Fatalf("COMMAND GETKEYS: %v", err)
			}
			if !slices.Equal(keys, server) {
				t.Errorf("keys %q, COMMAND GETKEYS says %q", keys, server)
			}
		})
	}
}

// vocabulary feeds the random invocations: the keywords key specs and key
// rules look for, small numbers (key counts), and the empty string.
var vocabulary = []string{
	"STORE", "STOREDIST", "STREAMS", "KEYS", "LIMIT", "GET", "BY", "AUTH", "AUTH2", "COPY",
	"REPLACE", "store", "streams", "keys", "0", "1", "2", "3", "-1", "",
}

// TestKeyPositionsRandomMatchServer calls every keyed command (and
// subcommand) in the table with random arguments of every length its arity
// allows (up to six more than the minimum) and compares the outcome with
// COMMAND GETKEYS: the same keys, or an error both ways.
//
// One difference is deliberate: when the key count of EVAL, EVALSHA,
// FCALL and their _RO forms is not an integer, is negative or exceeds the
// arguments, COMMAND GETKEYS answers with no keys (these commands may have
// none), while KeyPositions reports ErrBadArgs, because the server refuses
// to run such a call (TestBadArgsRefusedByServer).
func TestKeyPositionsRandomMatchServer(t *testing.T) {
	c := dialServer(t)
	rng := rand.New(rand.NewSource(7))
	var checked int
	for _, info := range keyedEntries() {
		for n := range argCounts(info) {
			tries := 8
			if info.Flags&MovableKeys != 0 {
				tries = 40
			}
			for range tries {
				a := randomArgs(rng, info, n)
				checked++
				compareWithServer(t, c, info, a)
			}
		}
	}
	t.Logf("%d random invocations checked", checked)
}

// keyedEntries lists every entry with keys: commands, and subcommands of
// containers.
func keyedEntries() []*Info {
	var out []*Info
	for _, info := range All() {
		if !info.HasKeys() {
			continue
		}
		if info.IsContainer() {
			for _, s := range info.Subcommands {
				if s.HasKeys() {
					out = append(out, s)
				}
			}
			continue
		}
		out = append(out, info)
	}
	return out
}

// argCounts yields the argument counts (after the command name, the
// subcommand name included) that fit the arity.
func argCounts(info *Info) func(func(int) bool) {
	return func(yield func(int) bool) {
		if info.Arity > 0 {
			yield(info.Arity - 1)
			return
		}
		for n := -info.Arity - 1; n <= -info.Arity+5; n++ {
			if !yield(n) {
				return
			}
		}
	}
}

// randomArgs builds n arguments for info: the subcommand name first for a
// subcommand, then a mix of unique tokens (so keys can be told apart) and
// vocabulary words.
func randomArgs(rng *rand.Rand, info *Info, n int) []any {
	a := make([]any, 0, n)
	if _, sub, ok := strings.Cut(info.Name, "|"); ok {
		a = append(a, strings.ToUpper(sub))
	}
	for len(a) < n {
		if rng.Intn(3) == 0 {
			a = append(a, vocabulary[rng.Intn(len(vocabulary))])
		} else {
			a = append(a, fmt.Sprintf("t%d", len(a)))
		}
	}
	return a
}

func compareWithServer(t *testing.T, c redis.Conn, info *Info, a []any) {
	t.Helper()
	top, _, _ := strings.Cut(info.Name, "|")
	_, ours, err := ourKeys(top, a)
	server, serr := serverKeys(t, c, top, a)
	switch {
	case serr != nil && err == nil:
		t.Errorf("%s %q: keys %q, COMMAND GETKEYS fails: %v", top, a, ours, serr)
	case serr == nil && err != nil && len(server) == 0 && info.Flags&NoMandatoryKeys != 0 &&
		errors.Is(err, ErrBadArgs) && strings.Contains(err.Error(), "number of keys"):
		// The deliberate difference described above.
	case serr == nil && err != nil:
		t.Errorf("%s %q: %v, COMMAND GETKEYS says %q", top, a, err, server)
	case err != nil && !errors.Is(err, ErrBadArgs):
		t.Errorf("%s %q: error %v does not match ErrBadArgs", top, a, err)
	case serr == nil && !slices.Equal(ours, server):
		t.Errorf("%s %q: keys %q, COMMAND GETKEYS says %q", top, a, ours, server)
	}
}
