package shard_test

import (
	"errors"
	"testing"

	"github.com/shardis/shardis/shard"
)

// A Sentinel refresh interval of a few nanoseconds would query the
// Sentinels back to back; it is a configuration error, as a tiny health
// interval is. Negative (off) and 0 (the default) stay valid.
func TestSentinelRefreshIntervalTooShortIsABadConfig(t *testing.T) {
	const base = "redis-ring+sentinel://127.0.0.1:26379?shards=a"
	for _, tc := range []struct {
		query string
		bad   bool
	}{
		{"&sentinel_refresh_interval=1ns", true},
		{"&sentinel_refresh_interval=9ms", true},
		{"&sentinel_min_refresh_interval=1ns", true},
		{"&sentinel_min_refresh_interval=999us", true},
		{"&sentinel_refresh_interval=1ns&sentinel_min_refresh_interval=1ns", true},
		{"", false},
		{"&sentinel_refresh_interval=-1s", false},
		{"&sentinel_refresh_interval=10ms", false},
		{"&sentinel_min_refresh_interval=1ms", false},
		{"&sentinel_refresh_interval=5s&sentinel_min_refresh_interval=100ms", false},
	} {
		_, err := shard.ParseURL(base + tc.query)
		switch {
		case tc.bad && !errors.Is(err, shard.ErrBadConfig):
			t.Errorf("ParseURL(%q): %v; want an error matching ErrBadConfig", tc.query, err)
		case !tc.bad && err != nil:
			t.Errorf("ParseURL(%q): %v; want it accepted", tc.query, err)
		}
	}
	file := func(interval string) string {
		return "shards: [{name: a, sentinel: {master: m}}]\nsentinel:\n  addrs: [\"127.0.0.1:26379\"]\n  refresh_interval: " + interval + "\n"
	}
	if _, err := shard.ParseConfig([]byte(file("1s"))); err != nil {
		t.Fatalf("ParseConfig with sentinel.refresh_interval 1s: %v; want it accepted", err)
	}
	if _, err := shard.ParseConfig([]byte(file("1us"))); !errors.Is(err, shard.ErrBadConfig) {
		t.Errorf("ParseConfig with sentinel.refresh_interval 1us: %v; want an error matching ErrBadConfig", err)
	}
}
