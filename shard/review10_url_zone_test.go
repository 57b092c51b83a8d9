package shard_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// TestReview10URLZoneIsPercentEncoded: in a URL an IPv6 zone follows
// "%25", the percent-encoded '%' (RFC 6874), as net/url reads it:
// redis-ring://[fe80::1%25eth0]:6379 is the host fe80::1 on interface
// eth0. ParseURL took the host as written, so the shard dialed
// "[fe80::1%25eth0]:6379", a zone "25eth0" that names no interface (Go
// reads its leading digits as interface index 25), and the same host written
// with a bare '%' passed for a second server. The zone is now unescaped;
// a bare '%' that "25" does not follow stays accepted as before.
func TestReview10URLZoneIsPercentEncoded(t *testing.T) {
	for _, tt := range []struct{ raw, want string }{
		{"redis-ring://[fe80::1%25eth0]:6379", "[fe80::1%eth0]:6379"},
		{"redis-ring://u:p@[fe80::1%25eth0]:6379,10.0.0.2:6379", "[fe80::1%eth0]:6379"},
		{"redis-ring://[fe80::1%25en%2D1]:6379", "[fe80::1%en-1]:6379"},
		{"redis-ring://[fe80::1%eth0]:6379", "[fe80::1%eth0]:6379"},
		{"redis-ring://[fe80::1%253]:6379", "[fe80::1%3]:6379"},
		{"redis-cluster://[fe80::1%25eth0]:7000", "[fe80::1%eth0]:7000"},
	} {
		cfg, err := shard.ParseURL(tt.raw)
		if err != nil {
			t.Errorf("ParseURL(%q): %v", tt.raw, err)
			continue
		}
		addrs := cfg.Seeds
		for _, s := range cfg.Shards {
			addrs = append(addrs, s.Addr)
		}
		if len(addrs) == 0 || addrs[0] != tt.want {
			t.Errorf("ParseURL(%q): addresses %q, want %q first", tt.raw, addrs, tt.want)
		}
	}

	cfg, err := shard.ParseURL("redis-ring+sentinel://[fe80::1%25eth0]:26379?shards=a")
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Sentinel.Addrs) != 1 || cfg.Sentinel.Addrs[0] != "[fe80::1%eth0]:26379" {
		t.Errorf("Sentinel addresses %q, want [fe80::1%%eth0]:26379", cfg.Sentinel.Addrs)
	}

	// The two spellings of one host are one server.
	_, err = shard.ParseURL("redis-ring://[fe80::1%25eth0]:6379,[fe80::1%eth0]:6379")
	if !errors.Is(err, ring.ErrDuplicateShard) {
		t.Errorf("the same host with its zone written two ways: %v, want ErrDuplicateShard", err)
	}

	// A broken encoding, or an empty zone, is refused, password unseen.
	for _, raw := range []string{
		"redis-ring://u:s3cret-Pw@[fe80::1%25]:6379",
		"redis-ring://u:s3cret-Pw@[fe80::1%25%zz]:6379",
		// An unencoded '?' cuts the user info short: the "host" is the
		// password's start, and only a part after the '?' holds the '@'.
		"redis-ring://[s3cret%25%zz]?Pw@10.0.0.1:6379",
	} {
		_, err := shard.ParseURL(raw)
		if !errors.Is(err, shard.ErrBadConfig) {
			t.Errorf("ParseURL(%q) = %v, want ErrBadConfig", raw, err)
			continue
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("ParseURL(%q): %q shows the password", raw, err)
		}
	}
}
