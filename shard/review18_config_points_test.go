package shard_test

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// review18Hosts returns n distinct "host:port" addresses.
func review18Hosts(n int) []string {
	hosts := make([]string, n)
	for i := range hosts {
		hosts[i] = fmt.Sprintf("10.0.%d.%d:6379", i/250, i%250)
	}
	return hosts
}

// review18Weights returns n copies of w, comma-separated.
func review18Weights(n, w int) string {
	return strings.TrimSuffix(strings.Repeat(fmt.Sprint(w)+",", n), ",")
}

// review18YAML returns a config file of n shards of weight w.
func review18YAML(hash string, n, w int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "hash: %s\nshards:\n", hash)
	for _, h := range review18Hosts(n) {
		fmt.Fprintf(&b, "  - {addr: %q, weight: %d}\n", h, w)
	}
	return b.String()
}

// review18JSON returns a JSON config of n shards of weight w.
func review18JSON(hash string, n, w int) string {
	var parts []string
	for _, h := range review18Hosts(n) {
		parts = append(parts, fmt.Sprintf(`{"addr": %q, "weight": %d}`, h, w))
	}
	return fmt.Sprintf(`{"hash": %q, "shards": [%s]}`, hash, strings.Join(parts, ", "))
}

// review18Allocated returns the bytes fn allocates.
func review18Allocated(fn func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	fn()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// A config whose ring would pass ring.MaxPoints is refused by ParseURL,
// ParseConfig (YAML and JSON) with an error matching ErrBadConfig and
// ring.ErrTooManyPoints, before the ring's points are allocated; the
// sizes the project supports (1,000 shards of weights 1 to 4) parse.
func TestReview18ConfigPointBound(t *testing.T) {
	url := func(hash string, n, w int) string {
		return fmt.Sprintf("redis-ring://%s?hash=%s&weights=%s", strings.Join(review18Hosts(n), ","), hash, review18Weights(n, w))
	}
	parseURL := func(s string) func() error {
		return func() error { _, err := shard.ParseURL(s); return err }
	}
	parseConfig := func(s string) func() error {
		return func() error { _, err := shard.ParseConfig([]byte(s)); return err }
	}
	refused := []struct {
		name  string
		parse func() error
	}{
		{"URL murmur3 one shard of weight 16384", parseURL(url("murmur3", 1, 16384))},
		{"URL murmur3 one shard of weight 4097", parseURL(url("murmur3", 1, 4097))},
		{"URL murmur3 1000 shards of weight 10000", parseURL(url("murmur3", 1000, 10000))},
		{"URL murmur3 1000 shards of weight 5", parseURL(url("murmur3", 1000, 5))},
		{"URL jedis one shard of weight 100000", parseURL(url("jedis", 1, 100000))},
		{"URL jedis md5 1000 shards of weight 100", parseURL(url("jedis", 1000, 100) + "&key_hash=md5")},
		{"URL modula one shard of weight 1<<24", parseURL(url("modula", 1, 1<<24))},
		{"URL modula one shard of weight 1<<40", parseURL(url("modula", 1, 1<<40))},
		{"YAML murmur3 one shard of weight 16384", parseConfig(review18YAML("murmur3", 1, 16384))},
		{"YAML jedis 1000 shards of weight 100", parseConfig(review18YAML("jedis", 1000, 100))},
		{"JSON murmur3 1000 shards of weight 10000", parseConfig(review18JSON("murmur3", 1000, 10000))},
		{"JSON jedis-legacy one shard of weight 30000", parseConfig(review18JSON("jedis-legacy", 1, 30000))},
	}
	for _, c := range refused {
		t.Run("refused/"+c.name, func(t *testing.T) {
			var err error
			// The text itself is parsed (1,000 entries of YAML take a few
			// MB); a ring of 4 million points would take about 90 MB.
			const limit = 16 << 20
			n := review18Allocated(func() { err = c.parse() })
			if !errors.Is(err, shard.ErrBadConfig) || !errors.Is(err, ring.ErrTooManyPoints) {
				t.Fatalf("error %v, want ErrBadConfig and ring.ErrTooManyPoints", err)
			}
			if n > limit {
				t.Fatalf("allocated %d bytes before refusing, want at most %d", n, limit)
			}
		})
	}
	weights := make([]string, 1000)
	for i := range weights {
		weights[i] = fmt.Sprint(1 + i%4)
	}
	supported := fmt.Sprintf("redis-ring://%s?weights=%s", strings.Join(review18Hosts(1000), ","), strings.Join(weights, ","))
	accepted := []struct {
		name  string
		parse func() error
	}{
		{"URL murmur3 1000 shards of weights 1-4", parseURL(supported)},
		{"URL murmur3 1000 shards of weight 4", parseURL(url("murmur3", 1000, 4))},
		{"URL jedis 1000 shards of weight 4", parseURL(url("jedis", 1000, 4))},
		{"URL ketama 1000 shards of weight 10000", parseURL(url("ketama", 1000, 10000))},
		{"YAML murmur3 1000 shards of weight 4", parseConfig(review18YAML("murmur3", 1000, 4))},
		{"JSON jedis 1000 shards of weight 4", parseConfig(review18JSON("jedis", 1000, 4))},
	}
	for _, c := range accepted {
		t.Run("accepted/"+c.name, func(t *testing.T) {
			if err := c.parse(); err != nil {
				t.Fatalf("refused: %v", err)
			}
		})
	}
}
