package hashtag

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

// FuzzParse checks Parse's contract on any input: an accepted name is
// "none", "cluster", "jedis" or two printable ASCII bytes, and the rule's
// String gives the name back; a refused one returns None and an error that
// wraps ErrBadRule and quotes the input. Two letters or digits are no
// pair.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "none", "cluster", "jedis", "{}", "$$", " ~", "\x7f}", "{\n", "é", "Cluster", "none ", "{}}", "no", "a:"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		r, err := Parse(name)
		named := name == "none" || name == "cluster" || name == "jedis"
		pair := len(name) == 2 && name[0] >= 0x20 && name[0] <= 0x7e && name[1] >= 0x20 && name[1] <= 0x7e &&
			!(isAlnum(name[0]) && isAlnum(name[1]))
		if err != nil {
			if named || pair {
				t.Fatalf("Parse(%q) refused a valid name: %v", name, err)
			}
			if r != None || !errors.Is(err, ErrBadRule) || !strings.Contains(err.Error(), strconv.Quote(name)) {
				t.Fatalf("Parse(%q) = %v, %v; want None and an error wrapping ErrBadRule that quotes the input", name, r, err)
			}
			return
		}
		if !named && !pair {
			t.Fatalf("Parse(%q) accepted it as %v", name, r)
		}
		if r.String() != name {
			t.Fatalf("Parse(%q).String() = %q", name, r.String())
		}
		if pair {
			want, perr := Pair(name[0], name[1])
			if perr != nil || r != want {
				t.Fatalf("Parse(%q) = %v, Pair gives %v, %v", name, r, want, perr)
			}
		}
	})
}

// isAlnum reports whether c is an ASCII letter or digit.
func isAlnum(c byte) bool {
	return strings.ContainsRune("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", rune(c))
}
