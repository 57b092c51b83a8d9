package shard_test

import (
	"testing"

	"github.com/shardis/shardis/shard"
)

// FuzzReview9URLAndFileAgree checks that the URL and the file forms say
// the same: a Config parsed from a URL, written in the file format with
// every field spelled out, parses to the same Config (defaults, zero
// values and explicit settings alike). Sentinel URLs and migrations,
// which the file writer here does not spell out, are left to
// FuzzParseSentinelURL and FuzzReview4ConfigSecrets.
func FuzzReview9URLAndFileAgree(f *testing.F) {
	for _, s := range urlSeeds {
		f.Add(s)
	}
	f.Add("rediss-ring://u:p@127.0.0.1:1,127.0.0.1:2?weights=3,1&names=a,b&idle_timeout=never&test_on_borrow=never&health_interval=-1s")
	f.Add("redis-cluster://127.0.0.1:7000?refresh_interval=-1ns&max_retry_wait=0s&auto_pipeline=true&wait=false")
	f.Fuzz(func(t *testing.T, raw string) {
		cfg, err := shard.ParseURL(raw)
		if err != nil || cfg.Migration != nil || len(cfg.Sentinel.Shards) > 0 {
			return
		}
		text := configYAML(t, cfg)
		fromFile, err := shard.ParseConfig(text)
		if err != nil {
			t.Fatalf("URL %q parsed, its file form does not: %v\n%s", raw, err, text)
		}
		sameConfig(t, cfg, fromFile)
	})
}
