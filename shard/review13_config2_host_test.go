package shard_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// TestReview13URLHostRefusesBadCharacters: a '%' (never decoded outside
// an IPv6 zone) or another character no host name holds passed the
// address check, and the dial failed later with a confusing error.
func TestReview13URLHostRefusesBadCharacters(t *testing.T) {
	for _, raw := range []string{
		"redis-ring://ho%2Dst:6379",
		"redis-ring://h%st:6379",
		"redis-cluster://se*ed:7000",
		"redis-ring://a:6379,b;c:6379",
		"redis-ring://h\"x:6379",
	} {
		if _, err := shard.ParseURL(raw); !errors.Is(err, shard.ErrBadConfig) {
			t.Errorf("ParseURL(%q) = %v, want ErrBadConfig", raw, err)
		} else if !strings.Contains(err.Error(), "host") {
			t.Errorf("ParseURL(%q): error %q does not speak of the host", raw, err)
		}
	}
	cfg := shard.Config{Shards: []ring.Shard{{Addr: "h%st:6379", Weight: 1}}}
	if err := cfg.Validate(); !errors.Is(err, shard.ErrBadConfig) {
		t.Errorf("Validate of shard h%%st:6379 = %v, want ErrBadConfig", err)
	}
	for _, raw := range []string{
		"redis-ring://redis-a.internal:6379,redis_b:6380,10.0.0.1:6379",
		"redis-ring://[::1]:6379,[::ffff:10.0.0.1]:6380",
		"redis-ring://[fe80::1%25eth0]:6379",
		"redis-ring://[fe80::1%eth0]:6379",
		"redis-ring://[fe80::1%2525x%2C]:6380",
		"redis-cluster://REDIS.example.com:7000",
	} {
		if _, err := shard.ParseURL(raw); err != nil {
			t.Errorf("ParseURL(%q): %v", raw, err)
		}
	}
}
