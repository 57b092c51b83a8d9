package shard_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/shardis/shardis/shard"
)

// TestReview9URLNamesWithWhiteSpace: a shard's name is its place on the
// ring, so a name that differs by a space places every key differently.
// The names option took "a, b" (a space after the comma, as in
// names=a,%20b or names=a,+b) as the names "a" and " b", silently
// moving b's keys, while weights=2,%201 was refused and a Sentinel URL's
// shards option trims its entries. A name with white space around it is
// now an error that says so.
func TestReview9URLNamesWithWhiteSpace(t *testing.T) {
	for _, q := range []string{"names=a,%20b", "names=a,+b", "names=a%09,b", "names=a,b%20"} {
		u := "redis-ring://127.0.0.1:7000,127.0.0.1:7001?" + q
		cfg, err := shard.ParseURL(u)
		if err == nil {
			t.Errorf("ParseURL(%q): accepted with shards %q and %q, want an error", u, cfg.Shards[0].Name, cfg.Shards[1].Name)
			continue
		}
		if !errors.Is(err, shard.ErrBadConfig) || !strings.Contains(err.Error(), "names") {
			t.Errorf("ParseURL(%q): %v, want ErrBadConfig naming the option", u, err)
		}
	}
	cfg, err := shard.ParseURL("redis-ring://127.0.0.1:7000,127.0.0.1:7001?names=a,b")
	if err != nil || cfg.Shards[0].Name != "a" || cfg.Shards[1].Name != "b" {
		t.Errorf("names=a,b: %v, %v", cfg.Shards, err)
	}
}
