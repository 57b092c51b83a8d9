package shard_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// TestReview13ValidateClusterBlockInRingMode: a ring config may carry a
// cluster block (unused), but Validate let invalid values in it through
// while a config file refused a misspelt read_from there.
func TestReview13ValidateClusterBlockInRingMode(t *testing.T) {
	base := func() shard.Config {
		return shard.Config{Shards: []ring.Shard{{Addr: "10.0.0.1:6379", Weight: 1}}}
	}
	for name, set := range map[string]func(*shard.ClusterOptions){
		"ReadFrom replica":     func(o *shard.ClusterOptions) { o.ReadFrom = "replica" },
		"ReadFrom Master":      func(o *shard.ClusterOptions) { o.ReadFrom = "Master" },
		"MaxRedirects -1":      func(o *shard.ClusterOptions) { o.MaxRedirects = -1 },
		"MaxRetryWait -1s":     func(o *shard.ClusterOptions) { o.MaxRetryWait = -time.Second },
		"MinRefreshInterval -": func(o *shard.ClusterOptions) { o.MinRefreshInterval = -time.Second },
		"RefreshInterval 60ns": func(o *shard.ClusterOptions) { o.RefreshInterval = 60 },
	} {
		cfg := base()
		set(&cfg.Cluster)
		if err := cfg.Validate(); !errors.Is(err, shard.ErrBadConfig) {
			t.Errorf("%s in ring mode: Validate = %v, want ErrBadConfig", name, err)
		} else if !strings.Contains(err.Error(), "Cluster.") {
			t.Errorf("%s: error %q does not name the Cluster field", name, err)
		}
	}
	// Valid but unused values stay accepted.
	cfg := base()
	cfg.Cluster = shard.ClusterOptions{ReadFrom: shard.ReadReplicaLatency, MaxRedirects: 3, RefreshInterval: -1}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("valid cluster block in ring mode: %v", err)
	}
}
