package hashtag

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzTag checks, for every predefined rule and for the pair named by rule
// (when it names one): no panic, the same answer twice, the same answer for
// string and []byte keys, a result that is part of the key, and agreement
// with a straightforward reference implementation.
func FuzzTag(f *testing.F) {
	f.Add("foo{bar}zap", "{}")
	f.Add("foo{}{bar}", "$$")
	f.Add("{a\nb}{c}", "<>")
	f.Add("{\u2028}{\xc2\x85}{\xe2\x80}", "cluster")
	f.Add("$$a$b$", "$$")
	f.Add("", "jedis")
	f.Fuzz(func(t *testing.T, key, rule string) {
		rules := []Rule{None, Cluster, Jedis}
		if r, err := Parse(rule); err == nil {
			rules = append(rules, r)
		}
		b := []byte(key)
		for _, r := range rules {
			got := r.Tag(key)
			if again := r.Tag(key); again != got {
				t.Fatalf("%v.Tag(%q) gave %q then %q", r, key, got, again)
			}
			gotBytes := r.TagBytes(b)
			if string(gotBytes) != got {
				t.Fatalf("%v: Tag(%q) = %q but TagBytes = %q", r, key, got, gotBytes)
			}
			if !bytes.Equal(b, []byte(key)) {
				t.Fatalf("%v.TagBytes modified the key", r)
			}
			if !strings.Contains(key, got) {
				t.Fatalf("%v.Tag(%q) = %q is not part of the key", r, key, got)
			}
			if want := oracleTag(r, key); got != want {
				t.Fatalf("%v.Tag(%q) = %q, reference says %q", r, key, got, want)
			}
		}
	})
}
