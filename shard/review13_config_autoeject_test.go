package shard

import (
	"errors"
	"strings"
	"testing"

	"github.com/shardis/shardis/ring"
)

// TestReview13AutoEjectNeedsHealthChecks: a negative Health.Interval
// turns the health checks off, and with them the only way a shard is
// marked down, so Health.AutoEject next to it would never take a shard
// out: it was accepted and did nothing. It is refused, in Go, URLs and
// files alike; each setting alone is still accepted.
func TestReview13AutoEjectNeedsHealthChecks(t *testing.T) {
	shards := []ring.Shard{{Addr: "127.0.0.1:7001", Weight: 1}, {Addr: "127.0.0.1:7002", Weight: 1}}
	both := Config{Shards: shards, Health: HealthOptions{Interval: -1, AutoEject: true}}
	_, urlErr := ParseURL("redis-ring://127.0.0.1:7001,127.0.0.1:7002?health_interval=-1s&auto_eject=true")
	_, fileErr := ParseConfig([]byte("shards: [{addr: '127.0.0.1:7001'}, {addr: '127.0.0.1:7002'}]\nhealth: {interval: -1s, auto_eject: true}\n"))
	for name, err := range map[string]error{"Config": both.Validate(), "URL": urlErr, "file": fileErr} {
		if !errors.Is(err, ErrBadConfig) {
			t.Errorf("%s with auto-eject and no health checks: %v, want ErrBadConfig", name, err)
			continue
		}
		if !strings.Contains(err.Error(), "AutoEject") || !strings.Contains(err.Error(), "Interval") {
			t.Errorf("%s: error %q does not name Health.AutoEject and Health.Interval", name, err)
		}
	}
	for _, h := range []HealthOptions{{Interval: -1}, {AutoEject: true}} {
		if err := (Config{Shards: shards, Health: h}).Validate(); err != nil {
			t.Errorf("Validate with %+v: %v", h, err)
		}
	}
}
