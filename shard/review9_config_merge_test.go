package shard_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/shardis/shardis/shard"
)

// TestReview9FileMergeKeysAndAliasesAreChecked: the checks of a file's
// fields skipped YAML merge keys and aliases, which the decoder then
// resolved on its own: a weight of 1.5 given through a merge
// (<<: {weight: 1.5}) or an alias (weight: *w, anchored on a string
// field) was silently truncated to 1, and a misspelt field in a merged
// mapping gave the decoder's own message, quoting a Go struct type. A
// merged mapping is now checked as the mapping it merges into, a scalar
// alias as its value, and an unknown field the decoder finds is reported
// as the others are.
func TestReview9FileMergeKeysAndAliasesAreChecked(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{"shards: [{addr: '127.0.0.1:7000', <<: {weight: 1.5}}]", `shards[0].weight: "1.5" is not a whole number`},
		{"shards: [{addr: '127.0.0.1:7000', <<: [{name: a}, {weight: 2.5}]}]", `shards[0].weight: "2.5" is not a whole number`},
		{"shards: [{addr: '127.0.0.1:7000', <<: {wieght: 2}}]", "unknown field shards[0].wieght (known: addr, name, weight, sentinel)"},
		{"pool: {client_name: &w 2.5}\nshards: [{addr: '127.0.0.1:7000', weight: *w}]", `shards[0].weight: "2.5" is not a whole number`},
		// A mapping anchored where one is allowed and merged through an
		// alias is checked where it is merged.
		{"health: &m {interval: 1s}\nshards: [{addr: '127.0.0.1:7000', <<: *m}]", "unknown field shards[0].interval"},
		// One anchored on a field that takes a single value is refused
		// there first.
		{"shards: [{addr: '127.0.0.1:7000', name: &m {wieght: 2}}, {addr: '127.0.0.1:7001', <<: *m}]", "shards[0].name: want a single value, not a mapping"},
	} {
		_, err := shard.ParseConfig([]byte(tc.file))
		if !errors.Is(err, shard.ErrBadConfig) {
			t.Errorf("ParseConfig(%q) = %v, want ErrBadConfig", tc.file, err)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, tc.want) || strings.Contains(msg, "struct {") {
			t.Errorf("ParseConfig(%q) = %q, want it to say %q (and no Go type)", tc.file, msg, tc.want)
		}
	}
	// A merge that is right is still read.
	cfg, err := shard.ParseConfig([]byte("shards: [{addr: '127.0.0.1:7000', <<: {name: a, weight: 3}}]"))
	if err != nil || len(cfg.Shards) != 1 || cfg.Shards[0].Name != "a" || cfg.Shards[0].Weight != 3 {
		t.Errorf("merge of name and weight: %v, %v", cfg.Shards, err)
	}
}
