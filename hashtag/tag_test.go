package hashtag

import (
	"bufio"
	"os"
	"regexp"
	"strings"
	"testing"
)

type tagCase struct {
	key, want string
}

func checkTag(t *testing.T, r Rule, tc tagCase) {
	t.Helper()
	if got := r.Tag(tc.key); got != tc.want {
		t.Errorf("%v.Tag(%q) = %q, want %q", r, tc.key, got, tc.want)
	}
	if got := r.TagBytes([]byte(tc.key)); string(got) != tc.want {
		t.Errorf("%v.TagBytes(%q) = %q, want %q", r, tc.key, got, tc.want)
	}
}

func TestClusterTag(t *testing.T) {
	for _, tc := range []tagCase{
		{"", ""},
		{"foo", "foo"},
		{"{user1000}.following", "user1000"},
		{"foo{bar}zap", "bar"},
		{"foo{}{bar}", "foo{}{bar}"},
		{"foo{{bar}}zap", "{bar"},
		{"foo{bar}{zap}", "bar"},
		{"{}", "{}"},
		{"{", "{"},
		{"}", "}"},
		{"}{", "}{"},
		{"}a{b}", "b"},
		{"{a", "{a"},
		{"a}", "a}"},
		{"{}}", "{}}"},
		{"{a}}", "a"},
		{"{\n}", "\n"},
		{"{\x00}", "\x00"},
		{"x{é}", "é"},
		{"{ }", " "},
	} {
		checkTag(t, Cluster, tc)
	}
}

func TestPairTag(t *testing.T) {
	dollar, err := Pair('$', '$')
	if err != nil {
		t.Fatal(err)
	}
	angle, err := Pair('<', '>')
	if err != nil {
		t.Fatal(err)
	}
	braces, err := Pair('{', '}')
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		rule Rule
		tagCase
	}{
		{dollar, tagCase{"", ""}},
		{dollar, tagCase{"user$1000$.x", "1000"}},
		{dollar, tagCase{"$$a$", "$$a$"}},
		{dollar, tagCase{"$a$b$", "a"}},
		{dollar, tagCase{"a$b", "a$b"}},
		{dollar, tagCase{"{a}", "{a}"}},
		{angle, tagCase{"x<a>y<b>", "a"}},
		{angle, tagCase{"x<<a>>", "<a"}},
		{angle, tagCase{"x<>y<b>", "x<>y<b>"}},
		{angle, tagCase{">a<", ">a<"}},
		{angle, tagCase{"{a}", "{a}"}},
		{braces, tagCase{"foo{}{bar}", "foo{}{bar}"}},
		{braces, tagCase{"foo{{bar}}zap", "{bar"}},
	} {
		checkTag(t, tt.rule, tt.tagCase)
	}
}

func TestNoneTag(t *testing.T) {
	for _, k := range []string{"", "foo", "{a}", "foo{}{bar}", "\xff{\n}"} {
		checkTag(t, None, tagCase{k, k})
		var zero Rule
		checkTag(t, zero, tagCase{k, k})
	}
}

// TestJedisTag adds cases the vectors file does not hold: line terminators,
// non-ASCII text and bytes that are not valid UTF-8. Each expected value was
// checked against java.util.regex (Matcher.find with \{(.+?)\} on the key
// decoded as UTF-8; for invalid bytes, Java's tag equals the returned bytes
// decoded the same way).
func TestJedisTag(t *testing.T) {
	for _, tc := range []tagCase{
		{"", ""},
		{"foo{}{bar}", "}{bar"},
		{"{}}", "}"},
		{"{a\nb}", "{a\nb}"},
		{"{a\rb}", "{a\rb}"},
		{"{\n}{b}", "b"},
		{"{}\n}", "{}\n}"},
		{"{}\n}{c}", "c"},
		{"{a\n{b}", "b"},
		{"{a\u0085b}", "{a\u0085b}"},
		{"{a\u2028b}x{y}", "y"},
		{"{a\u2029b}", "{a\u2029b}"},
		{"{\u2028}", "{\u2028}"},
		{"{\u0085}", "{\u0085}"},
		{"{a\u202ab}", "a\u202ab"}, // U+202A is not a line terminator
		{"{\u00a8}", "\u00a8"},
		{"{\x85}", "\x85"},         // a lone continuation byte is no U+0085
		{"{\xc2}", "\xc2"},         // a truncated sequence is an ordinary character
		{"{\xe2\x80}", "\xe2\x80"}, // same, two bytes short of U+2028
		{"{\xe2\x80\xaa}", "\xe2\x80\xaa"},
		{"\xe2\x80{\xa8}", "\xa8"},
		{"{\xff}", "\xff"},
		{"{é}", "é"},
		{"{€}", "€"},
		{"x{😀}", "😀"},
		{"{😀}}", "😀"},
		{"{}😀}", "}😀"},
		{"{\xf0\x9f}", "\xf0\x9f"},
		{"\n{a}", "a"},
		{"{a}\n", "a"},
		{"{\r\n}{\n}", "{\r\n}{\n}"},
		{" {\xff }", "\xff "},
	} {
		checkTag(t, Jedis, tc)
	}
}

// TestJedisVectors checks every row of the reference vectors produced by
// Jedis itself.
func TestJedisVectors(t *testing.T) {
	f, err := os.Open("testdata/keytag.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	rows := 0
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if strings.HasPrefix(text, "#") {
			continue
		}
		key, tag, ok := strings.Cut(text, "\t")
		if !ok {
			t.Fatalf("keytag.tsv:%d: no TAB in %q", line, text)
		}
		checkTag(t, Jedis, tagCase{key, tag})
		rows++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if rows < 50 {
		t.Fatalf("read %d rows from keytag.tsv, want at least 50", rows)
	}
}

// jedisOracle is the Jedis pattern written for Go's regexp package, whose
// leftmost-first, lazy matching agrees with Java's for this pattern once '.'
// is spelled out as "anything but a Java line terminator". Go reads an
// invalid UTF-8 byte as U+FFFD, an ordinary character, as Java does.
var jedisOracle = regexp.MustCompile(`\{([^\n\r\x{85}\x{2028}\x{2029}]+?)\}`)

func oracleTag(r Rule, key string) string {
	switch r.String() {
	case "none":
		return key
	case "jedis":
		if m := jedisOracle.FindStringSubmatchIndex(key); m != nil {
			return key[m[2]:m[3]]
		}
		return key
	}
	open, close := byte('{'), byte('}')
	if r != Cluster {
		s := r.String()
		open, close = s[0], s[1]
	}
	s := strings.IndexByte(key, open)
	if s < 0 {
		return key
	}
	e := strings.IndexByte(key[s+1:], close)
	if e <= 0 {
		return key
	}
	return key[s+1 : s+1+e]
}

func TestTagAgainstOracle(t *testing.T) {
	dollar, _ := Pair('$', '$')
	rules := []Rule{None, Cluster, Jedis, dollar}
	pieces := []string{"{", "}", "$", "a", "\n", "\r", "\u0085", "\u2028", "\u2029", "\xc2", "\xe2\x80", "é", "😀", "\x85"}
	// Every key made of up to four pieces.
	keys := []string{""}
	level := []string{""}
	for n := 0; n < 4; n++ {
		var next []string
		for _, k := range level {
			for _, p := range pieces {
				next = append(next, k+p)
			}
		}
		keys = append(keys, next...)
		level = next
	}
	for _, k := range keys {
		for _, r := range rules {
			if got, want := r.Tag(k), oracleTag(r, k); got != want {
				t.Fatalf("%v.Tag(%q) = %q, want %q", r, k, got, want)
			}
		}
	}
}

func TestTagIsSubslice(t *testing.T) {
	key := []byte("foo{bar}zap")
	got := Cluster.TagBytes(key)
	if &got[0] != &key[4] {
		t.Fatal("TagBytes did not return a subslice of the key")
	}
	if cap(got) != len(got) {
		t.Fatalf("cap(TagBytes) = %d, want %d so that appending cannot overwrite the key", cap(got), len(got))
	}
	s := "foo{bar}zap"
	if tag := Cluster.Tag(s); tag != "bar" || !strings.Contains(s, tag) {
		t.Fatalf("Tag = %q", tag)
	}
}

func TestTagAllocs(t *testing.T) {
	dollar, _ := Pair('$', '$')
	keys := []string{"", "plain-key", "{user1000}.following", "foo{}{bar}", "a{b\nc}d{e}", "$x$y"}
	for _, r := range []Rule{None, Cluster, Jedis, dollar} {
		for _, k := range keys {
			b := []byte(k)
			if n := testing.AllocsPerRun(100, func() { _ = r.Tag(k) }); n != 0 {
				t.Errorf("%v.Tag(%q): %v allocs, want 0", r, k, n)
			}
			if n := testing.AllocsPerRun(100, func() { _ = r.TagBytes(b) }); n != 0 {
				t.Errorf("%v.TagBytes(%q): %v allocs, want 0", r, k, n)
			}
		}
	}
}

func TestTagBytesNil(t *testing.T) {
	for _, r := range []Rule{None, Cluster, Jedis} {
		if got := r.TagBytes(nil); len(got) != 0 {
			t.Errorf("%v.TagBytes(nil) = %q", r, got)
		}
	}
}
