package shard

import (
	"errors"
	"strings"
	"testing"
)

// TestReview13ConfigComplexKey: a mapping key that is a list, a mapping
// or an alias ("? [pool]" in YAML) was reported as "unknown field  (known:
// ...)", naming an empty field, and an alias key by its anchor's name
// (pool.k), not by the field it names. The error now says where the key
// is and what is wrong with it, and an alias of a name is that name.
func TestReview13ConfigComplexKey(t *testing.T) {
	for _, doc := range []string{
		"shards: [{addr: '127.0.0.1:7001'}]\n? [pool]\n: {max_idle: 1}\n",
		"shards: [{addr: '127.0.0.1:7001'}]\npool:\n  ? {max_idle: 1}\n  : 2\n",
		"seeds: &k []\nshards: [{addr: '127.0.0.1:7001'}]\npool: {*k : 2}\n",
	} {
		_, err := ParseConfig([]byte(doc))
		if !errors.Is(err, ErrBadConfig) {
			t.Errorf("ParseConfig(%q) = %v, want ErrBadConfig", doc, err)
			continue
		}
		if msg := err.Error(); strings.Contains(msg, "field  ") || strings.Contains(msg, "field . ") || !strings.Contains(msg, "key") {
			t.Errorf("ParseConfig(%q) error %q: want it to say the key is not a field name", doc, msg)
		}
	}
	// An alias of a known name is that field: checked as it (a fraction is
	// no pool size), and not an unknown field named after the anchor.
	_, err := ParseConfig([]byte("shards: [{addr: '127.0.0.1:7001', name: &k max_idle}]\npool: {*k : 2.5}\n"))
	if err == nil || !strings.Contains(err.Error(), "pool.max_idle") || !strings.Contains(err.Error(), "whole number") {
		t.Errorf("an alias key naming max_idle with 2.5: %v, want pool.max_idle refused as not a whole number", err)
	}
}
