package shard_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// TestReview11URLSchemeIgnoresCase: URL schemes are case-insensitive
// (RFC 3986 3.1; net/url lowercases them), but ParseURL compared them
// case-sensitively and refused REDIS-RING://h:6379 or
// Rediss-Cluster://h:7000 as an unknown scheme. Any case now reads as the
// lowercase scheme, with the same mode, TLS and Sentinel settings.
func TestReview11URLSchemeIgnoresCase(t *testing.T) {
	for _, tc := range []struct {
		raw      string
		mode     shard.Mode
		tls      bool
		sentinel bool
	}{
		{"REDIS-RING://h1:6379,h2:6379", shard.ModeRing, false, false},
		{"Redis-Ring://h1:6379", shard.ModeRing, false, false},
		{"rEdIs-rInG://h1:6379", shard.ModeRing, false, false},
		{"REDISS-RING://h1:6379", shard.ModeRing, true, false},
		{"REDIS-CLUSTER://h1:7000", shard.ModeCluster, false, false},
		{"Rediss-Cluster://h1:7000", shard.ModeCluster, true, false},
		{"REDIS-RING+SENTINEL://s1:26379?shards=a,b", shard.ModeRing, false, true},
		{"Rediss-Ring+Sentinel://s1:26379?shards=a", shard.ModeRing, true, true},
	} {
		cfg, err := shard.ParseURL(tc.raw)
		if err != nil {
			t.Errorf("ParseURL(%q): %v", tc.raw, err)
			continue
		}
		if cfg.Mode != tc.mode {
			t.Errorf("ParseURL(%q): mode %v, want %v", tc.raw, cfg.Mode, tc.mode)
		}
		if got := cfg.Pool.TLSConfig != nil; got != tc.tls {
			t.Errorf("ParseURL(%q): TLS %v, want %v", tc.raw, got, tc.tls)
		}
		if got := len(cfg.Sentinel.Addrs) > 0; got != tc.sentinel {
			t.Errorf("ParseURL(%q): Sentinels %v, want %v", tc.raw, cfg.Sentinel.Addrs, tc.sentinel)
		}
		if tc.sentinel {
			if got := cfg.Sentinel.TLSConfig != nil; got != tc.tls {
				t.Errorf("ParseURL(%q): Sentinel TLS %v, want %v", tc.raw, got, tc.tls)
			}
		}
	}

	// Schemes that are not ours, in any case, stay refused; so do the
	// lookalikes that only Unicode case folding would match ("ſ", the
	// long s, folds to 's'; the Kelvin sign to 'k').
	for _, raw := range []string{"REDIS://h1:6379", "Redis-Rings://h1:6379", "redi\u017f-ring://h1:6379", "REDI\u017f-RING://h1:6379"} {
		_, err := shard.ParseURL(raw)
		if !errors.Is(err, shard.ErrBadConfig) || !strings.Contains(err.Error(), "unknown URL scheme") {
			t.Errorf("ParseURL(%q) = %v, want an unknown scheme ErrBadConfig", raw, err)
		}
	}
}

// TestReview11URLSchemeIgnoresCaseServes: a ring read from an upper-case
// URL serves commands on its real server.
func TestReview11URLSchemeIgnoresCaseServes(t *testing.T) {
	s := redistest.StartTB(t, redistest.Options{})
	cfg, err := shard.ParseURL("REDIS-RING://" + s.Addr + "?dial_timeout=2s")
	if err != nil {
		t.Fatalf("ParseURL: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := shard.New(ctx, cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	defer c.Close()
	if _, err := c.Do(ctx, "SET", "k", "v"); err != nil {
		t.Fatalf("SET: %v", err)
	}
	got, err := s.Do("GET", "k")
	if err != nil || got != "v" {
		t.Fatalf("GET on the server = %q, %v; want \"v\"", got, err)
	}
}
