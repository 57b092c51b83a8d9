package hashtag_test

import (
	"errors"
	"fmt"

	"github.com/shardis/shardis/hashtag"
)

func Example() {
	dollar, err := hashtag.Parse("$$")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range []hashtag.Rule{hashtag.None, hashtag.Cluster, hashtag.Jedis, dollar} {
		fmt.Printf("%-7s %q %q %q\n", r, r.Tag("{user1000}.following"), r.Tag("foo{}{bar}"), r.Tag("a$b$c"))
	}
	// Output:
	// none    "{user1000}.following" "foo{}{bar}" "a$b$c"
	// cluster "user1000" "foo{}{bar}" "a$b$c"
	// jedis   "user1000" "}{bar" "a$b$c"
	// $$      "{user1000}.following" "foo{}{bar}" "b"
}

func ExampleParse() {
	_, err := hashtag.Parse("crc16")
	fmt.Println(err)
	// Output:
	// shardis: bad hash tag rule: "crc16" (want "none", "cluster", "jedis" or two printable ASCII delimiters, not both letters or digits, such as "{}")
}

// Pair builds a twemproxy hash_tag rule from two delimiters; TagBytes is
// Tag for keys held in bytes.
func ExamplePair() {
	r, err := hashtag.Pair('<', '>')
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s %q\n", r, r.TagBytes([]byte("order<42>:items")))
	_, err = hashtag.Pair('\n', '>')
	fmt.Println(errors.Is(err, hashtag.ErrBadRule))
	// Output:
	// <> "42"
	// true
}
