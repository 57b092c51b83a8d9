package hashtag

import (
	"errors"
	"fmt"
)

// ErrBadRule is returned (wrapped) by [Parse] and [Pair] when a rule cannot be
// built from their input.
var ErrBadRule = errors.New("shardis: bad hash tag rule")

type kind uint8

const (
	kindNone kind = iota
	kindCluster
	kindJedis
	kindPair
)

// Rule says which part of a key is hashed. It is a small comparable value;
// the zero value is [None]. Rules are immutable and safe for concurrent use.
type Rule struct {
	kind  kind
	open  byte // only for pairs
	close byte // only for pairs
}

var (
	// None hashes the whole key.
	None = Rule{}

	// Cluster is the Redis Cluster hash tag rule: when the key holds a '{',
	// and a '}' comes after the first '{' with at least one byte between
	// them, the bytes between that '{' and that '}' are hashed; otherwise
	// the whole key is. Only the first '{' is considered, so "foo{}{bar}" is
	// hashed whole and "foo{{bar}}" hashes "{bar".
	Cluster = Rule{kind: kindCluster}

	// Jedis is the default key-tag rule of the Jedis Java client
	// (ShardedJedis, JedisSharding): the first match of the regular
	// expression \{(.+?)\} with Java semantics, whose group is hashed; when
	// nothing matches, the whole key is. The tag holds at least one
	// character and ends at the first '}' after that, so it may itself hold
	// '{' or '}' ("foo{}{bar}" hashes "}{bar", "{}}" hashes "}"). A line
	// terminator (\n, \r, U+0085, U+2028, U+2029, each UTF-8 encoded) before
	// the closing '}' makes the match at that '{' fail, and the search goes
	// on at the next '{'.
	//
	// Keys are taken as UTF-8. A byte that is not part of valid UTF-8 counts
	// as one ordinary character (as Java's replacement character would), and
	// the tag returned is the key's own bytes at the matched place.
	//
	// Jedis looks for the tag in String keys only: it hashes a byte[] key
	// whole, as [None] does. Keys that Java code writes through the byte[]
	// methods are found with None.
	Jedis = Rule{kind: kindJedis}
)

// Pair returns the twemproxy hash_tag rule with the given delimiters: the
// first open byte, then the first close byte after it, with at least one
// byte between them, delimit the hashed bytes; otherwise the whole key is
// hashed. When open == close (as in "$$"), the closing byte is the next
// occurrence after the opening one.
//
// Both delimiters must be printable ASCII bytes (0x20 to 0x7e), and not
// both ASCII letters or digits: a pair such as "no", "on" or "ok" is a
// misspelt or guessed name rather than delimiters (twemproxy would take
// it, shardis does not). Otherwise the error wraps [ErrBadRule].
// Pair('{', '}') hashes exactly like [Cluster], but keeps its own name
// "{}".
func Pair(open, close byte) (Rule, error) {
	if !printable(open) || !printable(close) {
		return None, fmt.Errorf("%w: hash tag pair %q: delimiters must be printable ASCII", ErrBadRule, string([]byte{open, close}))
	}
	if alnum(open) && alnum(close) {
		return None, fmt.Errorf("%w: hash tag pair %q: two letters or digits are taken for a misspelt name, not delimiters", ErrBadRule, string([]byte{open, close}))
	}
	return Rule{kind: kindPair, open: open, close: close}, nil
}

func printable(c byte) bool { return c >= 0x20 && c <= 0x7e }

func alnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// Parse returns the rule with the given name: "none", "cluster", "jedis",
// or a two-byte delimiter pair such as "{}" or "$$" (see [Pair]; two
// letters or digits, such as "no", are refused). Names are
// case-sensitive. Any other input gives an error wrapping [ErrBadRule] that
// quotes the input. Parse(r.String()) == r for every rule r.
func Parse(name string) (Rule, error) {
	switch name {
	case "none":
		return None, nil
	case "cluster":
		return Cluster, nil
	case "jedis":
		return Jedis, nil
	}
	if len(name) == 2 {
		if r, err := Pair(name[0], name[1]); err == nil {
			return r, nil
		}
	}
	return None, fmt.Errorf(`%w: %q (want "none", "cluster", "jedis" or two printable ASCII delimiters, not both letters or digits, such as "{}")`, ErrBadRule, name)
}

// String returns the name of the rule, as accepted by [Parse].
func (r Rule) String() string {
	switch r.kind {
	case kindCluster:
		return "cluster"
	case kindJedis:
		return "jedis"
	case kindPair:
		return string([]byte{r.open, r.close})
	default:
		return "none"
	}
}
