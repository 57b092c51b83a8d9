package command

import (
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"
)

// FromCommandInfo's error for an entry it cannot read read
// "shardis: COMMAND INFO reply: cmdspec: COMMAND entry 0: not a
// 10-element array (Redis 7 format): []interface {}": the name of an
// internal package, an entry number of a list the caller never gave, and
// a Go type where the reply's shape was meant. It must name the package
// once and say, in the reply's terms, what was wrong with it.
func TestReview12FromCommandInfoErrorSaysWhatWasWrong(t *testing.T) {
	c := dialServer(t)
	reply, err := redis.Values(c.Do("COMMAND", "INFO", "get"))
	if err != nil {
		t.Fatal(err)
	}
	if len(reply) != 1 {
		t.Fatalf("COMMAND INFO get holds %d entries, want 1", len(reply))
	}
	entry, ok := reply[0].([]any)
	if !ok || len(entry) < 10 {
		t.Fatalf("COMMAND INFO get = %#v, want an entry of 10 elements", reply[0])
	}
	if _, err := FromCommandInfo(entry); err != nil {
		t.Fatalf("the server's own entry: %v", err)
	}
	withArity := func(v any) []any {
		e := append([]any(nil), entry...)
		e[1] = v
		return e
	}
	for _, tt := range []struct {
		name  string
		entry any
		words []string
	}{
		// A Redis 6 server's entry: its first seven elements.
		{"a Redis 6 entry", entry[:7], []string{"7 elements", "10", "Redis 7"}},
		{"a nil entry", nil, []string{"nil"}},
		{"a bulk string", []byte("get"), []string{"bulk string"}},
		{"an arity as a bulk string", withArity([]byte("2")), []string{"get", "arity", "not an integer", "bulk string"}},
		{"an arity as an array", withArity([]any{int64(2)}), []string{"get", "arity", "not an integer", "array of 1 element"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := FromCommandInfo(tt.entry)
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			t.Logf("%s", msg)
			if !strings.HasPrefix(msg, "shardis: COMMAND INFO reply: ") {
				t.Errorf("%q does not start with %q", msg, "shardis: COMMAND INFO reply: ")
			}
			if n := strings.Count(msg, "shardis"); n != 1 {
				t.Errorf("%q names shardis %d times, want once", msg, n)
			}
			for _, internal := range []string{"cmdspec", "interface {}", "[]uint8", "int64", "COMMAND entry"} {
				if strings.Contains(msg, internal) {
					t.Errorf("%q shows %q, which says nothing of the reply", msg, internal)
				}
			}
			for _, w := range tt.words {
				if !strings.Contains(msg, w) {
					t.Errorf("%q does not say %q", msg, w)
				}
			}
		})
	}
}
