package shard_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// Migration.Addrs is looked up by the address the client dials, a
// host:port without credentials. A key that is not one was accepted and
// never used: MIGRATE went to the untranslated address without a word,
// and a key with a password pasted in kept the secret in the config.
func TestReview17MigrationAddrsKeys(t *testing.T) {
	const secret = "S3cret-77ab"
	base := func(addrs map[string]string) shard.Config {
		return shard.Config{
			Shards:    []ring.Shard{{Addr: "10.0.0.5:6379", Weight: 1}},
			Migration: &shard.Migration{From: &shard.Config{Shards: []ring.Shard{{Addr: "10.0.0.1:6379", Weight: 1}}}, Addrs: addrs},
		}
	}
	for _, tc := range []struct {
		key  string
		want string // in the error
	}{
		{"app:" + secret + "@10.0.0.5:6379", "credentials"},
		{":" + secret + "@10.0.0.5:6379", "credentials"},
		{"10.0.0.5", "host:port"},
		{"10.0.0.5:0", "port"},
		{"::1:6379", "brackets"},
		{"", "host:port"},
	} {
		addrs := map[string]string{tc.key: "192.168.0.5:6379"}
		err := base(addrs).Validate()
		if !errors.Is(err, shard.ErrBadConfig) || !strings.Contains(err.Error(), "Migration.Addrs") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("key %q: Validate() = %v, want ErrBadConfig naming Migration.Addrs and %q", tc.key, err, tc.want)
			continue
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("key %q: error %q shows the password", tc.key, err)
		}
	}
	// The same in a file.
	file := "shards: [{addr: '10.0.0.5:6379'}]\nmigration:\n  from: redis-ring://10.0.0.1:6379\n  addrs: {'u:" + secret + "@10.0.0.5:6379': '192.168.0.5:6379'}\n"
	_, err := shard.ParseConfig([]byte(file))
	if !errors.Is(err, shard.ErrBadConfig) || strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), "credentials") {
		t.Errorf("file: %v, want ErrBadConfig about credentials without the password", err)
	}
	// Keys that name a node of either topology, or one the config does
	// not list (a cluster's node, an IPv6 one), are taken.
	for _, key := range []string{"10.0.0.5:6379", "10.0.0.1:6379", "10.0.7.7:7000", "[fd00::1]:6379", "node-3.redis.internal:6379"} {
		if err := base(map[string]string{key: "192.168.0.5:6379"}).Validate(); err != nil {
			t.Errorf("key %q: %v", key, err)
		}
	}
}
