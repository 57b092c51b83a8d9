package shard_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/shardis/shardis/shard"
)

// FuzzParseSentinelURL feeds redis-ring+sentinel URLs to ParseURL: it
// never panics, every error is a bad-config error, an accepted config
// validates, and the Sentinel password never shows in an error.
func FuzzParseSentinelURL(f *testing.F) {
	f.Add("s1:26379,s2:26380", "shard-a=mymaster-a,shard-b,10.0.0.3:6379+shard-c", "weights=2,1,1&read_from=replica-random")
	f.Add("[::1]:26379", "a", "failover_wait=3s&sentinel_tls=true")
	f.Add("s1:26379", "a=,=b,,", "names=x")
	f.Fuzz(func(t *testing.T, hosts, shards, rest string) {
		const secret = "Zq9-secret-Zq9"
		raw := "redis-ring+sentinel://" + hosts + "?shards=" + shards + "&sentinel_password=" + secret + "&" + rest
		cfg, err := shard.ParseURL(raw)
		if err != nil {
			if !errors.Is(err, shard.ErrBadConfig) {
				t.Fatalf("error not wrapping ErrBadConfig: %v", err)
			}
			if !strings.HasPrefix(err.Error(), "shardis: ") {
				t.Fatalf("error without the shardis prefix: %v", err)
			}
			if strings.Contains(err.Error(), secret) {
				t.Fatalf("error shows the password: %v", err)
			}
			return
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("accepted config does not validate: %v", err)
		}
		if strings.Contains(cfg.String(), secret) {
			t.Fatalf("String shows the password")
		}
	})
}
