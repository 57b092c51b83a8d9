package shard_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/shard"
)

// TestReview9ClusterRefreshIntervalTooShortIsABadConfig: a cluster
// refresh interval of a few nanoseconds (RefreshInterval: 60 meant as
// seconds is 60ns) was accepted: the refresh loop then spun a core and,
// with a min refresh interval as short, queried the cluster's topology
// back to back, thousands of times a second. The health interval and
// the Sentinel intervals refuse such values; the cluster intervals now
// do too (RefreshInterval below 10ms, MinRefreshInterval below 1ms), in
// a Config, a URL and a file alike. Negative (off) and 0 (the default)
// stay valid.
func TestReview9ClusterRefreshIntervalTooShortIsABadConfig(t *testing.T) {
	seed := clusterForTest(t).Seeds()[0]
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	cfg := clusterConfig(seed)
	cfg.Cluster.RefreshInterval = 60 // meant as 60s
	cfg.Cluster.MinRefreshInterval = 100
	if c, err := shard.New(ctx, cfg); err == nil {
		stormed := waitUntil(2*time.Second, func() bool { return c.Stats().Refreshes > 100 })
		n := c.Stats().Refreshes
		c.Close()
		t.Errorf("New with RefreshInterval 60ns, MinRefreshInterval 100ns: accepted (%d topology refreshes, storm seen: %t)", n, stormed)
	} else if !errors.Is(err, shard.ErrBadConfig) || !strings.Contains(err.Error(), "RefreshInterval") {
		t.Errorf("New with RefreshInterval 60ns: %v, want ErrBadConfig naming the field", err)
	}

	for _, tc := range []struct {
		refresh, min time.Duration
		bad          bool
	}{
		{time.Nanosecond, 0, true},
		{9 * time.Millisecond, 0, true},
		{0, time.Nanosecond, true},
		{0, 999 * time.Microsecond, true},
		{-1, 999 * time.Microsecond, true},
		{0, 0, false},
		{-1, 0, false},
		{10 * time.Millisecond, time.Millisecond, false},
		{time.Minute, 100 * time.Millisecond, false},
	} {
		c := clusterConfig(seed)
		c.Cluster.RefreshInterval, c.Cluster.MinRefreshInterval = tc.refresh, tc.min
		err := c.Validate()
		if tc.bad != (err != nil) || (err != nil && !errors.Is(err, shard.ErrBadConfig)) {
			t.Errorf("Validate with RefreshInterval %v, MinRefreshInterval %v: %v, want bad=%t (ErrBadConfig)", tc.refresh, tc.min, err, tc.bad)
		}
		q := []string{}
		if tc.refresh != 0 {
			q = append(q, "refresh_interval="+tc.refresh.String())
		}
		if tc.min != 0 {
			q = append(q, "min_refresh_interval="+tc.min.String())
		}
		u := "redis-cluster://" + seed
		if len(q) > 0 {
			u += "?" + strings.Join(q, "&")
		}
		if _, err := shard.ParseURL(u); tc.bad != (err != nil) || (err != nil && !errors.Is(err, shard.ErrBadConfig)) {
			t.Errorf("ParseURL(%q): %v, want bad=%t (ErrBadConfig)", u, err, tc.bad)
		}
		file := "mode: cluster\nseeds: ['" + seed + "']\ncluster:\n  refresh_interval: " + tc.refresh.String() + "\n  min_refresh_interval: " + tc.min.String() + "\n"
		if _, err := shard.ParseConfig([]byte(file)); tc.bad != (err != nil) || (err != nil && !errors.Is(err, shard.ErrBadConfig)) {
			t.Errorf("ParseConfig(%q): %v, want bad=%t (ErrBadConfig)", file, err, tc.bad)
		}
	}
}

// waitUntil polls cond until it holds or d passes, and reports whether
// it held.
func waitUntil(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(5 * time.Millisecond)
	}
	return cond()
}
