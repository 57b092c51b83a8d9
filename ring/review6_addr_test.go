package ring

import (
	"errors"
	"testing"
)

// TestReview6NewRefusesPortSpellings: a port with a sign or a leading zero
// dials the same server as its plain spelling, so New took "h:06379" next to
// "h:6379" as two distinct shards on one server (and "h:+6379" as a valid
// address, which ParseShards refuses). New now wants the plain decimal port
// ParseShards writes.
func TestReview6NewRefusesPortSpellings(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:06379", "127.0.0.1:+6379", "127.0.0.1:006379", "[::1]:+6379", "127.0.0.1:0011211"} {
		for _, alg := range []Algorithm{Murmur3, Jedis, Ketama, Modula} {
			cfg := Config{Algorithm: alg, Shards: []Shard{
				{Addr: "127.0.0.1:6379", Weight: 1},
				{Addr: addr, Weight: 1},
			}}
			if _, err := New(cfg); !errors.Is(err, ErrBadShard) {
				t.Errorf("%s: New with shard %q = %v, want ErrBadShard", alg, addr, err)
			}
		}
	}
	// The plain spellings stay accepted.
	for _, addr := range []string{"127.0.0.1:1", "127.0.0.1:10", "127.0.0.1:65535", "[::1]:6380", "h:11211"} {
		if _, err := New(Config{Shards: []Shard{{Addr: "127.0.0.1:6379", Weight: 1}, {Addr: addr, Weight: 1}}}); err != nil {
			t.Errorf("New with shard %q: %v", addr, err)
		}
	}
}
