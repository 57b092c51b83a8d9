package shard_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// Migration.Addrs gives the host:port MIGRATE connects to. A value that
// is not one (a missing port, an IPv6 host without brackets) was
// accepted, and MIGRATE then got it as a host with the default port 6379.
func TestReview4MigrationAddrsAreHostPort(t *testing.T) {
	from := shard.Config{Shards: []ring.Shard{{Addr: "127.0.0.1:6391", Weight: 1}}}
	for _, bad := range []string{"10.1.1.1", "::1:7000", "10.1.1.1:0", "host name:7000"} {
		cfg := shard.Config{
			Mode:      shard.ModeCluster,
			Seeds:     []string{"127.0.0.1:7000"},
			Migration: &shard.Migration{From: &from, Addrs: map[string]string{"127.0.0.1:7000": bad}},
		}
		err := cfg.Validate()
		if !errors.Is(err, shard.ErrBadConfig) || !strings.Contains(err.Error(), bad) {
			t.Errorf("Validate with Migration.Addrs value %q = %v, want ErrBadConfig naming it", bad, err)
		}
		yaml := "url: redis-cluster://127.0.0.1:7000\nmigration:\n  from: redis-ring://127.0.0.1:6391\n  addrs: {\"127.0.0.1:7000\": \"" + bad + "\"}\n"
		if _, err := shard.ParseConfig([]byte(yaml)); !errors.Is(err, shard.ErrBadConfig) {
			t.Errorf("ParseConfig with migration.addrs value %q = %v, want ErrBadConfig", bad, err)
		}
	}
	// A host:port (IPv6 in brackets too) is accepted, and "" means as dialed.
	for _, good := range []string{"10.1.1.1:7000", "[fd00::1]:7000", ""} {
		cfg := shard.Config{
			Mode:      shard.ModeCluster,
			Seeds:     []string{"127.0.0.1:7000"},
			Migration: &shard.Migration{From: &from, Addrs: map[string]string{"127.0.0.1:7000": good}},
		}
		if err := cfg.Validate(); err != nil {
			t.Errorf("Validate with Migration.Addrs value %q = %v", good, err)
		}
	}
}
