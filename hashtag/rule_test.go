package hashtag

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	dollar, _ := Pair('$', '$')
	braces, _ := Pair('{', '}')
	space, _ := Pair(' ', '~')
	for _, tt := range []struct {
		name string
		want Rule
	}{
		{"none", None},
		{"cluster", Cluster},
		{"jedis", Jedis},
		{"$$", dollar},
		{"{}", braces},
		{" ~", space},
	} {
		got, err := Parse(tt.name)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.name, err)
			continue
		}
		if got != tt.want {
			t.Errorf("Parse(%q) = %v, want %v", tt.name, got, tt.want)
		}
		if got.String() != tt.name {
			t.Errorf("Parse(%q).String() = %q", tt.name, got.String())
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, name := range []string{"", "Cluster", "JEDIS", "x", "{}}", "{\x00", "\x7f}", "{\n", "é", "none "} {
		r, err := Parse(name)
		if err == nil {
			t.Errorf("Parse(%q) = %v, want an error", name, r)
			continue
		}
		if !errors.Is(err, ErrBadRule) {
			t.Errorf("Parse(%q) error %v does not wrap ErrBadRule", name, err)
		}
		if !strings.HasPrefix(err.Error(), "shardis: ") {
			t.Errorf("Parse(%q) error %q does not start with \"shardis: \"", name, err)
		}
		if !strings.Contains(err.Error(), strconv.Quote(name)) {
			t.Errorf("Parse(%q) error %q does not name the input", name, err)
		}
		if r != None {
			t.Errorf("Parse(%q) returned %v with its error, want None", name, r)
		}
	}
}

func TestPairErrors(t *testing.T) {
	for _, p := range [][2]byte{{0, '}'}, {'{', 0x7f}, {'\n', '\n'}, {0x80, 0x80}, {'\t', '}'}} {
		_, err := Pair(p[0], p[1])
		if !errors.Is(err, ErrBadRule) {
			t.Errorf("Pair(%q, %q) error = %v, want ErrBadRule", p[0], p[1], err)
		}
	}
}

func TestRuleStringRoundTrip(t *testing.T) {
	rules := []Rule{None, Cluster, Jedis, {}}
	for c := byte(0x20); c <= 0x7e; c++ {
		if alnum(c) {
			continue // two letters or digits are no pair
		}
		r, err := Pair(c, c)
		if err != nil {
			t.Fatalf("Pair(%q, %q): %v", c, c, err)
		}
		rules = append(rules, r)
	}
	for _, r := range rules {
		back, err := Parse(r.String())
		if err != nil || back != r {
			t.Errorf("Parse(%q) = %v, %v; want %v", r.String(), back, err, r)
		}
	}
	if (Rule{}) != None {
		t.Error("the zero Rule is not None")
	}
	if braces, _ := Pair('{', '}'); braces == Cluster || braces.String() != "{}" {
		t.Errorf("Pair('{', '}') = %v, want a pair named \"{}\" distinct from Cluster", braces)
	}
}
