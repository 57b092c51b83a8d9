package shard_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/shard"
)

// An alias of a mapping was not checked where it is used: the decoder's
// own error named the field without its section ("line 2: unknown field
// max_idle", on the line of pool, where max_idle is right), and a value
// it takes and changes (weight 1.5 read as 1) went through. An alias is
// now checked where it is used, named by that path.
func TestReview17AliasCheckedWhereUsed(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"shards: [{addr: '10.0.0.1:6379'}]\npool: &a {max_idle: 1}\nhealth: *a\n", "unknown field health.max_idle"},
		{"shards: [{addr: '10.0.0.1:6379'}]\npool: &a {max_idle: 1}\nhealth: {<<: *a}\n", "unknown field health.max_idle"},
		{"x-base: &b {addr: '10.0.0.1:6379', weight: 1.5}\nshards: [*b]\n", "unknown field x-base"},
		{"shards:\n  - &b {addr: '10.0.0.1:6379', name: a}\n  - {<<: *b, addr: '10.0.0.2:6379', name: b, weight: 1.5}\n", `shards[1].weight: "1.5" is not a whole number`},
		{"shards:\n  - {addr: '10.0.0.1:6379', name: a, weight: &w 1.5}\n", `shards[0].weight: "1.5" is not a whole number`},
	} {
		_, err := shard.ParseConfig([]byte(tc.in))
		if !errors.Is(err, shard.ErrBadConfig) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseConfig(%q) = %v, want ErrBadConfig saying %q", tc.in, err, tc.want)
		}
	}
	// Aliases used as YAML means them still work.
	cfg, err := shard.ParseConfig([]byte("shards:\n  - &b {addr: '10.0.0.1:6379', name: a, weight: 2}\n  - {<<: *b, addr: '10.0.0.2:6379', name: b}\n"))
	if err != nil || len(cfg.Shards) != 2 || cfg.Shards[1].Weight != 2 {
		t.Fatalf("merged shard: %v, %v; want b with a's weight 2", err, cfg.Shards)
	}
}

// Merges of merges of one anchor twice over double at every level: the
// check follows each anchor once, and ends at once.
func TestReview17AliasChainIsLinear(t *testing.T) {
	var b strings.Builder
	b.WriteString("shards:\n  - &s0 {addr: '10.0.0.1:6379', name: s0}\n")
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&b, "  - &s%d {<<: [*s%d, *s%d], name: s%d}\n", i, i-1, i-1, i)
	}
	start := time.Now()
	_, err := shard.ParseConfig([]byte(b.String()))
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("ParseConfig took %v", d)
	}
	if err != nil && !errors.Is(err, shard.ErrBadConfig) {
		t.Fatalf("ParseConfig: %v, want nil or ErrBadConfig", err)
	}
}
