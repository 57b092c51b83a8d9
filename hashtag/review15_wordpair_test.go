package hashtag

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

// Any two printable characters were a delimiter pair, so a misspelt or
// guessed name of two letters ("no", "on", "ok", "No") or digits ("00")
// was accepted as a pair rule, silently hashing keys by what lies
// between an 'n' and an 'o'. Two letters or digits are now refused with
// an error naming the accepted spellings; pairs with punctuation, which
// twemproxy's hash_tag users write, stay.
func TestReview15WordLikePairsAreRefused(t *testing.T) {
	for _, tt := range []struct {
		name string
		ok   bool
	}{
		// The names and the documented pairs.
		{"none", true},
		{"cluster", true},
		{"jedis", true},
		{"{}", true},
		{"$$", true},
		{"<>", true},
		{"[]", true},
		{"++", true},
		{"&&", true},
		{"##", true},
		{" ~", true},
		// A pair with one letter or digit is no word.
		{"a:", true},
		{"{0", true},
		// Two letters or digits: a word, not delimiters.
		{"no", false},
		{"No", false},
		{"NO", false},
		{"on", false},
		{"of", false},
		{"ok", false},
		{"ab", false},
		{"00", false},
		{"1a", false},
		// Longer words were refused already.
		{"none ", false},
		{"off", false},
		{"yes", false},
		{"true", false},
		{"None", false},
	} {
		r, err := Parse(tt.name)
		if tt.ok {
			if err != nil || r.String() != tt.name {
				t.Errorf("Parse(%q) = %v, %v; want the rule %q", tt.name, r, err, tt.name)
			}
			continue
		}
		if err == nil {
			t.Errorf("Parse(%q) = %v, want an error", tt.name, r)
			continue
		}
		if r != None || !errors.Is(err, ErrBadRule) || !strings.Contains(err.Error(), strconv.Quote(tt.name)) {
			t.Errorf("Parse(%q) = %v, %v; want None and an error wrapping ErrBadRule that quotes the input", tt.name, r, err)
		}
		for _, spelling := range []string{`"none"`, `"cluster"`, `"jedis"`, `"{}"`} {
			if !strings.Contains(err.Error(), spelling) {
				t.Errorf("Parse(%q) error %q does not name the accepted spelling %s", tt.name, err, spelling)
			}
		}
	}
	for _, p := range [][2]byte{{'n', 'o'}, {'O', 'K'}, {'4', '2'}} {
		if r, err := Pair(p[0], p[1]); err == nil || !errors.Is(err, ErrBadRule) {
			t.Errorf("Pair(%q, %q) = %v, %v; want an error wrapping ErrBadRule", p[0], p[1], r, err)
		}
	}
}
