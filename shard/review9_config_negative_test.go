package shard_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// TestReview9NegativeLimitsNameTheirField: a negative cluster limit gave
// "negative cluster retry or refresh limit" and a negative Sentinel one
// "negative Sentinel refresh interval, timeout or failover wait", leaving
// the user to guess which of three fields (and which URL option or file
// key) was wrong. Each error now names its field.
func TestReview9NegativeLimitsNameTheirField(t *testing.T) {
	cluster := func(f func(*shard.ClusterOptions)) shard.Config {
		c := shard.Config{Mode: shard.ModeCluster, Seeds: []string{"127.0.0.1:7000"}}
		f(&c.Cluster)
		return c
	}
	sentinel := func(f func(*shard.SentinelOptions)) shard.Config {
		c := shard.Config{Shards: []ring.Shard{{Name: "a", Weight: 1}},
			Sentinel: shard.SentinelOptions{Addrs: []string{"127.0.0.1:26379"}, Shards: []shard.SentinelShard{{Name: "a"}}}}
		f(&c.Sentinel)
		return c
	}
	for _, tc := range []struct {
		cfg   shard.Config
		field string
	}{
		{cluster(func(o *shard.ClusterOptions) { o.MaxRedirects = -1 }), "MaxRedirects"},
		{cluster(func(o *shard.ClusterOptions) { o.MaxRetryWait = -time.Second }), "MaxRetryWait"},
		{cluster(func(o *shard.ClusterOptions) { o.MinRefreshInterval = -time.Second }), "MinRefreshInterval"},
		{sentinel(func(o *shard.SentinelOptions) { o.MinRefreshInterval = -time.Second }), "MinRefreshInterval"},
		{sentinel(func(o *shard.SentinelOptions) { o.Timeout = -time.Second }), "Timeout"},
		{sentinel(func(o *shard.SentinelOptions) { o.FailoverWait = -time.Second }), "FailoverWait"},
	} {
		err := tc.cfg.Validate()
		if !errors.Is(err, shard.ErrBadConfig) {
			t.Errorf("Validate with a negative %s: %v, want ErrBadConfig", tc.field, err)
			continue
		}
		if !strings.Contains(err.Error(), tc.field) {
			t.Errorf("Validate with a negative %s: %q does not name it", tc.field, err)
		}
	}
}
