package shard

import (
	"errors"
	"strings"
	"testing"
)

// TestReview13SentinelURLWeightsTwice gives a plain shard's weight in the
// shards entry of a redis-ring+sentinel URL (HOST:PORT:WEIGHT+NAME) and
// again in the weights option: the option silently replaced the entry's
// weight (3 became 1), which moves keys. One weight in two places is
// refused; either place alone keeps working.
func TestReview13SentinelURLWeightsTwice(t *testing.T) {
	for _, raw := range []string{
		"redis-ring+sentinel://127.0.0.1:26379?shards=127.0.0.1:7001:3+a,b&weights=1,1",
		"redis-ring+sentinel://127.0.0.1:26379?shards=b,[::1]:7001:3+a&weights=1,3",
		"redis-ring+sentinel://127.0.0.1:26379?weights=2,1&shards=b,127.0.0.1:7001:1+a",
	} {
		cfg, err := ParseURL(raw)
		if !errors.Is(err, ErrBadConfig) {
			t.Errorf("ParseURL(%s) = %v (shards %v), want ErrBadConfig", raw, err, cfg.Shards)
			continue
		}
		if !strings.Contains(err.Error(), "weights") {
			t.Errorf("ParseURL(%s) error %q does not name the weights option", raw, err)
		}
	}
	for _, tc := range []struct {
		raw  string
		want []int
	}{
		{"redis-ring+sentinel://127.0.0.1:26379?shards=127.0.0.1:7001:3+a,b", []int{3, 1}},
		{"redis-ring+sentinel://127.0.0.1:26379?shards=127.0.0.1:7001+a,b&weights=2,5", []int{2, 5}},
		{"redis-ring+sentinel://127.0.0.1:26379?shards=[::1]:7001+a,b&weights=2,5", []int{2, 5}},
	} {
		cfg, err := ParseURL(tc.raw)
		if err != nil {
			t.Errorf("ParseURL(%s): %v", tc.raw, err)
			continue
		}
		if len(cfg.Shards) != len(tc.want) {
			t.Errorf("ParseURL(%s): %d shards, want %d", tc.raw, len(cfg.Shards), len(tc.want))
			continue
		}
		for i, w := range tc.want {
			if cfg.Shards[i].Weight != w {
				t.Errorf("ParseURL(%s): shard %d has weight %d, want %d", tc.raw, i, cfg.Shards[i].Weight, w)
			}
		}
	}
}
