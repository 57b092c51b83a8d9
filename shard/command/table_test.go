package command

import (
	"strings"
	"testing"
)

// mixedCase alternates upper and lower case: "oBjEcT|eNcOdInG".
func mixedCase(s string) string {
	b := []byte(s)
	for i := range b {
		if i%2 == 1 {
			b[i] = strings.ToUpper(string(b[i]))[0]
		}
	}
	return string(b)
}

func TestLookupEveryCommand(t *testing.T) {
	n := 0
	for _, info := range All() {
		entries := append([]*Info{info}, info.Subcommands...)
		for _, e := range entries {
			n++
			for _, name := range []string{e.Name, strings.ToUpper(e.Name), mixedCase(e.Name)} {
				if got := Lookup(name); got != e {
					t.Errorf("Lookup(%q) = %v, want the %q entry", name, got, e.Name)
				}
			}
			if e.Name != strings.ToLower(e.Name) {
				t.Errorf("name %q is not lower case", e.Name)
			}
		}
		for _, s := range info.Subcommands {
			_, sub, ok := strings.Cut(s.Name, "|")
			if !ok || !strings.HasPrefix(s.Name, info.Name+"|") {
				t.Errorf("subcommand %q of %q is not named parent|sub", s.Name, info.Name)
			}
			if got := info.Subcommand(strings.ToUpper(sub)); got != s {
				t.Errorf("%s.Subcommand(%q) = %v", info.Name, sub, got)
			}
			if got := info.Resolve([]any{[]byte(sub), "x"}); got != s {
				t.Errorf("%s.Resolve(%q) = %v", info.Name, sub, got)
			}
		}
	}
	if n < 300 {
		t.Errorf("only %d entries; the table looks truncated", n)
	}
	for _, name := range []string{"", "nosuchcommand", "get ", " get", "object|", "|encoding", "object|nosuch",
		strings.Repeat("a", 100), "gét", "GET\x00"} {
		if got := Lookup(name); got != nil {
			t.Errorf("Lookup(%q) = %q, want nil", name, got.Name)
		}
	}
}

func TestFlags(t *testing.T) {
	cases := []struct {
		name                  string
		write, readOnly, keys bool
		has, hasNot           Flags
		request               RequestPolicy
		response              ResponsePolicy
	}{
		{name: "get", readOnly: true, keys: true, has: ReadOnly | Fast, hasNot: Write},
		{name: "set", write: true, keys: true, has: Write | DenyOOM, hasNot: ReadOnly | MovableKeys},
		{name: "del", write: true, keys: true, has: Write, request: RequestMultiShard, response: ResponseAggSum},
		{name: "mget", readOnly: true, keys: true, has: ReadOnly | Fast, request: RequestMultiShard},
		{name: "mset", write: true, keys: true, has: Write | DenyOOM, request: RequestMultiShard, response: ResponseAllSucceeded},
		{name: "eval", keys: true, has: NoScript | NoMandatoryKeys | MovableKeys, hasNot: Write | ReadOnly},
		{name: "eval_ro", readOnly: true, keys: true, has: ReadOnly | NoMandatoryKeys | MovableKeys},
		{name: "blpop", write: true, keys: true, has: Write | Blocking},
		{name: "sort", write: true, keys: true, has: Write | MovableKeys},
		{name: "sort_ro", readOnly: true, keys: true, has: ReadOnly | MovableKeys},
		{name: "zunionstore", write: true, keys: true, has: Write | MovableKeys},
		{name: "xread", readOnly: true, keys: true, has: ReadOnly | Blocking | MovableKeys},
		{name: "publish", has: PubSub | Fast},
		{name: "spublish", has: PubSub},
		{name: "ping", has: Fast, hasNot: Write | ReadOnly, request: RequestAllShards, response: ResponseAllSucceeded},
		{name: "dbsize", readOnly: true, has: ReadOnly | Fast, request: RequestAllShards, response: ResponseAggSum},
		{name: "keys", readOnly: true, has: ReadOnly, request: RequestAllShards},
		{name: "info", request: RequestAllShards, response: ResponseSpecial},
		{name: "flushall", write: true, has: Write, request: RequestAllShards, response: ResponseAllSucceeded},
		{name: "shutdown", has: Admin | NoScript},
		{name: "object|encoding", readOnly: true, keys: true, has: ReadOnly},
		{name: "xgroup|create", write: true, keys: true, has: Write | DenyOOM},
		{name: "script|load", has: NoScript, request: RequestAllNodes, response: ResponseAllSucceeded},
		{name: "config|set", has: Admin | NoScript, request: RequestAllNodes, response: ResponseAllSucceeded},
	}
	for _, tc := range cases {
		info := Lookup(tc.name)
		if info == nil {
			t.Errorf("Lookup(%q) = nil", tc.name)
			continue
		}
		if info.IsWrite() != tc.write || info.IsReadOnly() != tc.readOnly || info.HasKeys() != tc.keys {
			t.Errorf("%s: IsWrite %v IsReadOnly %v HasKeys %v, want %v %v %v", tc.name,
				info.IsWrite(), info.IsReadOnly(), info.HasKeys(), tc.write, tc.readOnly, tc.keys)
		}
		if info.Flags&tc.has != tc.has || info.Flags&tc.hasNot != 0 {
			t.Errorf("%s: flags %q, want %q and not %q", tc.name, info.Flags, tc.has, tc.hasNot)
		}
		if info.RequestPolicy != tc.request || info.ResponsePolicy != tc.response {
			t.Errorf("%s: policies %q/%q, want %q/%q", tc.name, info.RequestPolicy, info.ResponsePolicy, tc.request, tc.response)
		}
	}
}

func TestKeylessCommands(t *testing.T) {
	for _, name := range []string{"ping", "info", "flushall", "flushdb", "dbsize", "keys", "scan", "randomkey",
		"script|load", "script", "config|get", "client|list", "publish", "spublish", "ssubscribe", "multi", "exec",
		"auth", "hello", "select", "cluster|slots", "function|load", "time", "echo", "save", "acl|whoami"} {
		info := Lookup(name)
		if info == nil {
			t.Errorf("Lookup(%q) = nil", name)
			continue
		}
		if info.HasKeys() {
			t.Errorf("%s: HasKeys true", name)
		}
	}
	// Keyless calls give no keys and no error.
	for _, tc := range []struct {
		name string
		args []any
	}{{"PING", nil}, {"INFO", args("server")}, {"FLUSHALL", nil}, {"SCRIPT", args("LOAD", "return 1")},
		{"PUBLISH", args("ch", "msg")}, {"SPUBLISH", args("ch", "msg")}, {"KEYS", args("*")}} {
		pos, err := Lookup(tc.name).KeyPositions(tc.args, nil)
		if err != nil || len(pos) != 0 {
			t.Errorf("%s %v: KeyPositions = %v, %v; want none", tc.name, tc.args, pos, err)
		}
	}
}

// TestContainers checks that a container answers for its subcommands.
func TestContainers(t *testing.T) {
	obj := Lookup("OBJECT")
	if !obj.IsContainer() || !obj.HasKeys() || !obj.IsReadOnly() || obj.IsWrite() {
		t.Errorf("OBJECT: container %v keys %v readonly %v write %v", obj.IsContainer(), obj.HasKeys(), obj.IsReadOnly(), obj.IsWrite())
	}
	xgroup := Lookup("xgroup")
	if !xgroup.IsWrite() || xgroup.IsReadOnly() {
		t.Errorf("XGROUP: write %v readonly %v, want true false", xgroup.IsWrite(), xgroup.IsReadOnly())
	}
	if script := Lookup("script"); script.HasKeys() || script.IsWrite() {
		t.Errorf("SCRIPT: keys %v write %v", script.HasKeys(), script.IsWrite())
	}
	if got := obj.Resolve(args("freq", "k")); got != Lookup("object|freq") {
		t.Errorf("Resolve(freq) = %v", got)
	}
	if got := obj.Resolve(nil); got != obj {
		t.Errorf("Resolve(nil) = %v, want the container", got)
	}
	if got := obj.Resolve(args("nosuch")); got != nil {
		t.Errorf("Resolve(nosuch) = %v, want nil", got)
	}
	if got := Lookup("get").Resolve(args("k")); got != Lookup("get") {
		t.Errorf("GET.Resolve = %v", got)
	}
	if Lookup("get").Subcommand("x") != nil || obj.Subcommand("") != nil || obj.Subcommand("encoding|x") != nil {
		t.Error("Subcommand found something that does not exist")
	}
	// A subcommand entry takes the same arguments as its container.
	pos, err := Lookup("object|encoding").KeyPositions(args("ENCODING", "k"), nil)
	if err != nil || len(pos) != 1 || pos[0] != 1 {
		t.Errorf("object|encoding KeyPositions = %v, %v; want [1]", pos, err)
	}
}

// TestEveryUnevaluableSpecHasRule: a command whose key specs the server
// cannot evaluate (unknown type, incomplete) needs a hand-written rule, and
// every rule belongs to such a command.
func TestEveryUnevaluableSpecHasRule(t *testing.T) {
	needs := map[string]bool{}
	for _, info := range All() {
		for _, e := range append([]*Info{info}, info.Subcommands...) {
			for _, ks := range e.KeySpecs {
				if ks.Begin.Kind == BeginUnknown || ks.Find.Kind == FindUnknown || ks.Flags&KeyIncomplete != 0 {
					needs[e.Name] = true
				}
			}
		}
	}
	for name := range needs {
		if rules[name] == nil || Lookup(name).rule == nil {
			t.Errorf("%s has key specs that cannot be evaluated and no rule", name)
		}
	}
	for name := range rules {
		if !needs[name] {
			t.Errorf("rule for %s, whose key specs need none", name)
		}
	}
	if len(needs) != 3 {
		t.Logf("commands needing rules: %v", needs)
	}
}

func TestChannelPositions(t *testing.T) {
	cases := []struct {
		name string
		args []any
		want []int
	}{
		{"SPUBLISH", args("ch", "msg"), []int{0}},
		{"SSUBSCRIBE", args("a", "b", "c"), []int{0, 1, 2}},
		{"SUNSUBSCRIBE", args("a"), []int{0}},
		{"SUNSUBSCRIBE", nil, nil},
		{"PUBLISH", args("ch", "msg"), nil},
		{"GET", args("k"), nil},
	}
	for _, tc := range cases {
		got, err := Lookup(tc.name).ChannelPositions(tc.args, nil)
		if err != nil || !equalInts(got, tc.want) {
			t.Errorf("%s %v: ChannelPositions = %v, %v; want %v", tc.name, tc.args, got, err, tc.want)
		}
	}
	if _, err := Lookup("SPUBLISH").ChannelPositions(args("ch"), nil); err == nil {
		t.Error("SPUBLISH with one argument: no error")
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestFlagsString(t *testing.T) {
	cases := []struct {
		got, want string
	}{
		{(Write | DenyOOM | MovableKeys).String(), "write movablekeys denyoom"},
		{Flags(0).String(), ""},
		{(Module | 1<<30).String(), "module 0x40000000"},
		{(KeyRO | KeyAccess).String(), "RO access"},
		{(KeyNotKey | KeyVariableFlags).String(), "not_key variable_flags"},
		{RequestMultiShard.String(), "multi_shard"},
		{RequestPolicy(99).String(), "unknown"},
		{ResponseAggSum.String(), "agg_sum"},
		{ResponseDefault.String(), ""},
		{ResponsePolicy(99).String(), "unknown"},
	}
	for _, tc := range cases {
		if tc.got != tc.want {
			t.Errorf("String() = %q, want %q", tc.got, tc.want)
		}
	}
}
