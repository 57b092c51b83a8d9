package shard_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// TestReview9ConfigStringSentinelAndRouter: Config.String promises the
// configuration as the client will use it, every default filled in. For
// Sentinel shards it printed the Sentinel options as given (Timeout: 0s,
// RefreshInterval: 0s, ReadFrom: "", a shard's Sentinels as [] where it
// uses the shared ones) and each Sentinel shard in the shard list as
// ":1 a", an address with an empty host; for a Router it printed a ring
// placement (Hash: murmur3, KeyHash: murmur3, Tag: cluster) that places
// no key. Now the Sentinel options show their defaults and each shard's
// resolved Sentinels, a Sentinel shard is marked as one, and a Router
// config shows no ring settings.
func TestReview9ConfigStringSentinelAndRouter(t *testing.T) {
	cfg := shard.Config{
		Shards: []ring.Shard{{Name: "a", Weight: 2}, {Name: "plain", Addr: "127.0.0.1:7000", Weight: 1}},
		Sentinel: shard.SentinelOptions{
			Addrs:    []string{"127.0.0.1:26379"},
			Password: "sentinel-secret",
			Shards:   []shard.SentinelShard{{Name: "a", MasterName: "ma"}},
		},
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		s := fmt.Sprintf(verb, cfg)
		for _, want := range []string{"RefreshInterval: 5s", "MinRefreshInterval: 100ms", "Timeout: 1s", `ReadFrom: "master"`,
			`{Name: "a", MasterName: "ma", Addrs: [127.0.0.1:26379]`, "<sentinel>:2 a", "127.0.0.1:7000:1 plain"} {
			if !strings.Contains(s, want) {
				t.Errorf("%s of a Sentinel config lacks %q:\n%s", verb, want, s)
			}
		}
		for _, bad := range []string{"Timeout: 0s", "sentinel-secret", " :2 a", "[:2 a"} {
			if strings.Contains(s, bad) {
				t.Errorf("%s of a Sentinel config shows %q:\n%s", verb, bad, s)
			}
		}
	}
	// The options as given are not changed by printing them.
	if cfg.Sentinel.Timeout != 0 || cfg.Sentinel.Shards[0].Addrs != nil || cfg.Sentinel.Shards[0].Password != "" {
		t.Errorf("String changed the config: %+v", cfg.Sentinel)
	}

	r := listRouter{{Name: "a", Addr: "127.0.0.1:7000"}}
	s := shard.Config{Router: r}.String()
	if !strings.Contains(s, "Router: shard_test.listRouter") {
		t.Errorf("Router config String lacks the Router: %s", s)
	}
	for _, bad := range []string{"Hash:", "KeyHash:", "Tag:", "Shards:"} {
		if strings.Contains(s, bad) {
			t.Errorf("Router config String shows ring setting %q, which places no key: %s", bad, s)
		}
	}
}
