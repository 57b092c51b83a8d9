package shard_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/shardis/shardis/shard"
)

// TestReview13URLNamesRefuseEmpty: names=a,,c left shard 1 without a
// name, so it was placed on the ring by its address: a typo that moves
// keys. The empty entry is refused, and the error names the option and
// the position.
func TestReview13URLNamesRefuseEmpty(t *testing.T) {
	for _, tt := range []struct{ raw, pos string }{
		{"redis-ring://h1:6379,h2:6379,h3:6379?names=a,,c", "name 1"},
		{"redis-ring://h1:6379,h2:6379?names=,b", "name 0"},
		{"redis-ring://h1:6379,h2:6379?names=a,", "name 1"},
		{"redis-ring://h1:6379?names=", "name 0"},
	} {
		cfg, err := shard.ParseURL(tt.raw)
		if !errors.Is(err, shard.ErrBadConfig) {
			var names []string
			for _, s := range cfg.Shards {
				names = append(names, s.Name)
			}
			t.Errorf("ParseURL(%q) = names %q, %v; want ErrBadConfig", tt.raw, names, err)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, "names") || !strings.Contains(msg, tt.pos) || !strings.Contains(msg, "empty") {
			t.Errorf("ParseURL(%q): error %q does not say names, %s, empty", tt.raw, msg, tt.pos)
		}
	}
	cfg, err := shard.ParseURL("redis-ring://h1:6379,h2:6379,h3:6379?names=a,b,c")
	if err != nil || len(cfg.Shards) != 3 || cfg.Shards[1].Name != "b" {
		t.Fatalf("names=a,b,c: %+v, %v", cfg.Shards, err)
	}
}
