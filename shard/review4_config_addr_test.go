package shard_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// Validate (and so ParseURL and ParseConfig) accepts exactly the addresses
// a dial can use: an IPv6 address without brackets, a host with white
// space or a port that is not plain digits must be ErrBadConfig at once,
// not an error of another kind from New or from the first command.
func TestReview4SeedAndHostAddressesAreDialable(t *testing.T) {
	bad := []string{"::1:7000", "fe80::1:7000", "127.0.0.1:+7000", "127.0.0.1: 7000", " 127.0.0.1:7000", "seed one:7000", "[::1]:", "[::1:7000", "::1]:7000"}
	for _, addr := range bad {
		cfg := shard.Config{Mode: shard.ModeCluster, Seeds: []string{addr}}
		if err := cfg.Validate(); !errors.Is(err, shard.ErrBadConfig) {
			t.Errorf("Validate of seed %q = %v, want ErrBadConfig", addr, err)
		} else if !strings.Contains(err.Error(), strconv.Quote(addr)) {
			t.Errorf("Validate of seed %q = %q, want the address named", addr, err)
		}
		if _, err := shard.ParseConfig([]byte("mode: cluster\nseeds: [" + strconv.Quote(addr) + "]\n")); !errors.Is(err, shard.ErrBadConfig) {
			t.Errorf("ParseConfig with seed %q = %v, want ErrBadConfig", addr, err)
		}
	}
	for _, raw := range []string{"redis-cluster://::1:7000", "redis-ring://127.0.0.1:6379, 127.0.0.1:6380", "redis-ring://127.0.0.1:+6379"} {
		if _, err := shard.ParseURL(raw); !errors.Is(err, shard.ErrBadConfig) {
			t.Errorf("ParseURL(%q) = %v, want ErrBadConfig", raw, err)
		}
	}
	for _, addr := range []string{"[::1]:7000", "[fe80::1%eth0]:7000", "10.0.0.1:7000", "redis-7.internal:7000"} {
		cfg := shard.Config{Mode: shard.ModeCluster, Seeds: []string{addr}}
		if err := cfg.Validate(); err != nil {
			t.Errorf("Validate of seed %q = %v, want nil", addr, err)
		}
	}
}

// A bracketed IPv6 address in a URL reaches the server (::ffff:127.0.0.1
// is the loopback address in IPv6 form).
func TestReview4BracketedIPv6URLServes(t *testing.T) {
	srv := redistest.StartTB(t, redistest.Options{})
	cfg, err := shard.ParseURL("redis-ring://[::ffff:127.0.0.1]:" + strconv.Itoa(srv.Port) + "?health_interval=-1ns")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := shard.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Do(ctx, "SET", "review4:v6", "ok"); err != nil {
		t.Fatal(err)
	}
	if got, err := srv.Do("GET", "review4:v6"); err != nil || got != "ok" {
		t.Fatalf("the server holds %q, %v; want ok", got, err)
	}
	if got, err := redis.String(c.Do(ctx, "GET", "review4:v6")); err != nil || got != "ok" {
		t.Fatalf("GET = %q, %v", got, err)
	}
}

// Ring shards given in Go (not through a URL) get the same address check.
func TestReview4RingShardAddressesAreDialable(t *testing.T) {
	for _, addr := range []string{" 127.0.0.1:6379", "127.0.0.1:+6379", "my host:6379"} {
		cfg := shard.Config{Shards: []ring.Shard{{Addr: "127.0.0.1:6380", Weight: 1}, {Addr: addr, Weight: 1}}}
		if err := cfg.Validate(); !errors.Is(err, shard.ErrBadConfig) || !strings.Contains(err.Error(), strconv.Quote(addr)) {
			t.Errorf("Validate of shard %q = %v, want ErrBadConfig naming it", addr, err)
		}
		if _, err := shard.ParseConfig([]byte("shards: [{addr: " + strconv.Quote(addr) + "}]\n")); !errors.Is(err, shard.ErrBadConfig) {
			t.Errorf("ParseConfig with shard %q = %v, want ErrBadConfig", addr, err)
		}
	}
}
