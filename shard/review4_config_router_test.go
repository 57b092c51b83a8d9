package shard_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// A Router places keys by itself: the ring's placement settings, auto
// eject (which takes shards out of a ring) and Sentinel shards do nothing
// next to it, and Validate accepted them without a word.
func TestReview4RouterRefusesRingSettings(t *testing.T) {
	router := review4OneNode{shard.Node{Addr: "127.0.0.1:6380"}}
	for _, tc := range []struct {
		name, want string
		change     func(*shard.Config)
	}{
		{"hash", "Hash", func(c *shard.Config) { c.Hash = ring.Jedis }},
		{"key hash", "KeyHash", func(c *shard.Config) { c.KeyHash = "md5" }},
		{"tag", "Tag", func(c *shard.Config) { c.Tag = "none" }},
		{"auto eject", "AutoEject", func(c *shard.Config) { c.Health.AutoEject = true }},
		{"sentinel", "Sentinel", func(c *shard.Config) { c.Sentinel.Addrs = []string{"127.0.0.1:26379"} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := shard.Config{Router: router}
			if err := cfg.Validate(); err != nil {
				t.Fatalf("a Router alone: %v", err)
			}
			tc.change(&cfg)
			err := cfg.Validate()
			if !errors.Is(err, shard.ErrBadConfig) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate = %v, want ErrBadConfig naming %s", err, tc.want)
			}
		})
	}
}
