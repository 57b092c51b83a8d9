package shard_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// Every way fmt can print a Config, its Sentinel settings or one Sentinel
// shard hides the passwords: %#v walks the fields of a struct that has
// no GoString, String or not.
func TestReview4PrintedConfigHidesSentinelPasswords(t *testing.T) {
	const poolPW, defaultPW, shardPW = "pool-s3cret", "sentinel-s3cret", "shard-s3cret"
	cfg := shard.Config{
		Shards: []ring.Shard{{Name: "a", Weight: 1}, {Name: "b", Weight: 1}},
		Sentinel: shard.SentinelOptions{
			Addrs:    []string{"127.0.0.1:26379"},
			Username: "watcher",
			Password: defaultPW,
			Shards:   []shard.SentinelShard{{Name: "a"}, {Name: "b", Username: "own", Password: shardPW}},
		},
		Pool: pool.Options{Username: "app", Password: poolPW},
	}
	from := cfg
	cfg.Migration = &shard.Migration{From: &from}
	values := map[string]any{
		"Config":          cfg,
		"*Config":         &cfg,
		"SentinelOptions": cfg.Sentinel,
		"*SentinelOpts":   &cfg.Sentinel,
		"SentinelShard":   cfg.Sentinel.Shards[1],
		"*SentinelShard":  &cfg.Sentinel.Shards[1],
		"[]SentinelShard": cfg.Sentinel.Shards,
		"Migration":       *cfg.Migration,
		"*Migration":      cfg.Migration,
	}
	for name, v := range values {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
			out := fmt.Sprintf(verb, v)
			for _, pw := range []string{poolPW, defaultPW, shardPW} {
				if strings.Contains(out, pw) {
					t.Errorf("%s printed with %s shows a password: %s", name, verb, out)
				}
			}
		}
	}
	// What is printed still says which passwords are set, and the names.
	if out := fmt.Sprintf("%v", cfg.Sentinel.Shards[1]); !strings.Contains(out, "***") || !strings.Contains(out, `"b"`) || !strings.Contains(out, `"own"`) {
		t.Errorf("SentinelShard printed as %s, want its name, user and *** for the password", out)
	}
	if out := fmt.Sprintf("%#v", cfg); !strings.Contains(out, "***") || !strings.Contains(out, "watcher") {
		t.Errorf("%%#v of Config is %s, want the Sentinel user and *** for the passwords", out)
	}
}
