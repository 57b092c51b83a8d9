package ring

import (
	"errors"
	"strings"
	"testing"
)

// TestReview7OneServerTwoSpellingsIsRefused: New and ParseShards compared
// addresses as text, so one server spelled two ways ("[::1]:6379" and
// "[0::1]:6379", "localhost:6379" and "127.0.0.1:6379") passed as two
// shards, and the ring put "two" shards' keys on one server. Both now
// compare IP literals by value (IPv4-mapped IPv6 as IPv4), host names
// without case or a final dot, and localhost as the loopback addresses,
// and refuse such a list with ErrDuplicateShard naming both entries. What
// is hashed is unchanged: the address text as written.
func TestReview7OneServerTwoSpellingsIsRefused(t *testing.T) {
	same := [][2]string{
		{"[::1]:6379", "[0::1]:6379"},
		{"[::1]:6379", "[0:0:0:0:0:0:0:1]:6379"},
		{"[2001:db8::1]:6379", "[2001:DB8:0::1]:6379"},
		{"127.0.0.1:6379", "[::ffff:127.0.0.1]:6379"},
		{"localhost:6379", "127.0.0.1:6379"},
		{"[::1]:6379", "localhost:6379"},
		{"localhost:6379", "LocalHost.:6379"},
		{"Redis-1.Example:6379", "redis-1.example.:6379"},
	}
	for _, p := range same {
		shards := []Shard{{Name: "a", Addr: p[0], Weight: 1}, {Name: "b", Addr: p[1], Weight: 1}}
		for _, alg := range []Algorithm{Murmur3, Jedis, JedisLegacy, Ketama, Modula} {
			_, err := New(Config{Algorithm: alg, Shards: shards})
			if !errors.Is(err, ErrDuplicateShard) {
				t.Errorf("%s: New with %q and %q = %v, want ErrDuplicateShard", alg, p[0], p[1], err)
				continue
			}
			if msg := err.Error(); !strings.Contains(msg, "0 ("+p[0]+")") || !strings.Contains(msg, "1 ("+p[1]+")") {
				t.Errorf("%s: New error %q does not name both shards", alg, msg)
			}
		}
		list := p[0] + " a," + p[1] + " b"
		_, err := ParseShards(list)
		if !errors.Is(err, ErrDuplicateShard) || !errors.Is(err, ErrBadShardList) {
			t.Errorf("ParseShards(%q) = %v, want ErrBadShardList and ErrDuplicateShard", list, err)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, p[0]) || !strings.Contains(msg, p[1]) || !strings.Contains(msg, "entry 0 ("+p[0]+")") {
			t.Errorf("ParseShards(%q) error %q does not name both entries", list, msg)
		}
	}
	distinct := [][2]string{
		{"127.0.0.1:6379", "127.0.0.2:6379"},
		{"[::1]:6379", "[::1]:6380"},
		{"[::1]:6379", "[::2]:6379"},
		{"localhost:6379", "10.0.0.1:6379"},
		{"redis-1.example:6379", "redis-2.example:6379"},
	}
	for _, p := range distinct {
		shards := []Shard{{Name: "a", Addr: p[0], Weight: 1}, {Name: "b", Addr: p[1], Weight: 1}}
		for _, alg := range []Algorithm{Murmur3, Jedis, JedisLegacy, Ketama, Modula} {
			if _, err := New(Config{Algorithm: alg, Shards: shards}); err != nil {
				t.Errorf("%s: New with %q and %q: %v", alg, p[0], p[1], err)
			}
		}
		if _, err := ParseShards(p[0] + " a," + p[1] + " b"); err != nil {
			t.Errorf("ParseShards with %q and %q: %v", p[0], p[1], err)
		}
	}
}
