package hashtag

import (
	"errors"
	"testing"
)

// TestReview17TwemproxyHashTagEdgeCases checks the pair rule against
// twemproxy's request forwarding: it looks for the first left delimiter
// byte in the key, then for the first right delimiter byte strictly after
// it; when both are found and the bytes between them are not empty, those
// bytes are hashed, and otherwise the whole key is. The expected tags
// below are worked out by hand from that description.
func TestReview17TwemproxyHashTagEdgeCases(t *testing.T) {
	cases := []struct {
		pair, key, want string
	}{
		// "{}" as in the twemproxy documentation.
		{"{}", "user:{1000}:following", "1000"},
		{"{}", "{}", "{}"},                 // empty tag: whole key
		{"{}", "a{}b{c}", "a{}b{c}"},       // first '{' gives an empty tag; no second try
		{"{}", "a{b", "a{b"},               // no closing byte
		{"{}", "a}b{c", "a}b{c"},           // closing byte only before the opening one
		{"{}", "{{c}}", "{c"},              // nested: first '{', first '}' after it
		{"{}", "{", "{"},                   // opening byte at the very end
		{"{}", "", ""},                     // empty key
		{"[]", "x[y]z[w]", "y"},            // another pair: first match only
		{"[]", "x{y}z", "x{y}z"},           // braces mean nothing under "[]"
		{"::", "a:b:c", "b"},               // same byte: next occurrence after the first
		{"::", "a::b", "a::b"},             // same byte adjacent: empty tag, whole key
		{"::", "a:b", "a:b"},               // a single occurrence: no tag
		{"::", ":", ":"},                   // a lone delimiter
		{"::", ":::x:", ":::x:"},           // first two adjacent: empty, no retry
		{"$$", "$ab$$cd$", "ab"},           // ends at the first '$' after the opening one
		{"{}", "k{é}", "é"},                // multi-byte UTF-8 inside the tag is kept whole
		{"{}", "é{\xff\xfe}é", "\xff\xfe"}, // bytes, not characters
		{"<>", "a<b>c>", "b"},
		{"}{", "a}b{c", "b"}, // reversed braces are two ordinary bytes
		{"}{", "a{b}c", "a{b}c"},
	}
	for _, c := range cases {
		r, err := Parse(c.pair)
		if err != nil {
			t.Fatalf("Parse(%q): %v", c.pair, err)
		}
		if got := r.Tag(c.key); got != c.want {
			t.Errorf("%s: Tag(%q) = %q, want %q", c.pair, c.key, got, c.want)
		}
		if got := string(r.TagBytes([]byte(c.key))); got != c.want {
			t.Errorf("%s: TagBytes(%q) = %q, want %q", c.pair, c.key, got, c.want)
		}
	}
}

// TestReview17TwemproxyHashTagLength checks the hash_tag length rule:
// twemproxy's configuration refuses a hash_tag whose length in bytes is not
// two, so a single byte, three bytes or a four-byte "«»" is no pair. "é" is
// exactly two bytes (0xc3 0xa9), which twemproxy would take as delimiters;
// Pair documents that it takes printable ASCII only, so it is refused too.
func TestReview17TwemproxyHashTagLength(t *testing.T) {
	for _, s := range []string{"", "{", "{}}", "«»", "{»", "é"} {
		if r, err := Parse(s); err == nil || !errors.Is(err, ErrBadRule) {
			t.Errorf("Parse(%q) = %v, %v; want an error wrapping ErrBadRule", s, r, err)
		}
	}
}
