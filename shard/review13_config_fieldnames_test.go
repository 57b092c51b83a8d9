package shard

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/ring"
)

// TestReview13ValidateNamesTheField: every Validate error about one
// setting names it as Config spells it, as the Cluster ones do
// (Cluster.MaxRedirects); the health checks' said "health failure
// limit", and a bad seed did not say which one it was (shard 1 does).
func TestReview13ValidateNamesTheField(t *testing.T) {
	ringCfg := func(h HealthOptions) Config {
		return Config{Shards: []ring.Shard{{Addr: "127.0.0.1:7001", Weight: 1}}, Health: h}
	}
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{ringCfg(HealthOptions{FailureLimit: -1}), "Health.FailureLimit"},
		{ringCfg(HealthOptions{Timeout: -time.Second}), "Health.Timeout"},
		{ringCfg(HealthOptions{Timeout: 500}), "Health.Timeout"},
		{ringCfg(HealthOptions{Interval: 5}), "Health.Interval"},
		{Config{Mode: ModeCluster, Seeds: []string{"127.0.0.1:7000", "127.0.0.1"}}, "seed 1"},
		{Config{Mode: ModeCluster, Seeds: []string{"127.0.0.1:7000"}, Cluster: ClusterOptions{MaxRedirects: -1}}, "Cluster.MaxRedirects"},
	} {
		err := tc.cfg.Validate()
		if !errors.Is(err, ErrBadConfig) {
			t.Errorf("Validate = %v, want ErrBadConfig naming %s", err, tc.want)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate = %q, want it to name %s", err, tc.want)
		}
	}
}
