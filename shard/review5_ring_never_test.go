package shard_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard"
)

// pool.Never (keep idle connections, never PING them on borrow) is what
// fmt prints of a Config as "never"; a file and a URL take that word
// back, for the two options that accept Never. Elsewhere it stays an
// error.
func TestNeverInFilesAndURLs(t *testing.T) {
	srv := redistest.StartTB(t, redistest.Options{})
	file := "shards: [{addr: \"" + srv.Addr + "\"}]\npool: {idle_timeout: never, test_on_borrow: never}\n"
	fromFile, err := shard.ParseConfig([]byte(file))
	if err != nil {
		t.Fatalf("ParseConfig: %v", err)
	}
	fromURL, err := shard.ParseURL("redis-ring://" + srv.Addr + "?idle_timeout=never&test_on_borrow=never")
	if err != nil {
		t.Fatalf("ParseURL: %v", err)
	}
	for name, cfg := range map[string]shard.Config{"file": fromFile, "URL": fromURL} {
		if cfg.Pool.IdleTimeout != pool.Never || cfg.Pool.TestOnBorrow != pool.Never {
			t.Fatalf("%s: IdleTimeout %v, TestOnBorrow %v; want both pool.Never", name, cfg.Pool.IdleTimeout, cfg.Pool.TestOnBorrow)
		}
		if s := cfg.String(); !strings.Contains(s, "IdleTimeout=never") || !strings.Contains(s, "TestOnBorrow=never") {
			t.Fatalf("%s: String() = %s; want IdleTimeout=never and TestOnBorrow=never", name, s)
		}
		c, err := shard.New(context.Background(), cfg)
		if err != nil {
			t.Fatalf("%s: New: %v", name, err)
		}
		if _, err := c.Do(context.Background(), "SET", "never", name); err != nil {
			t.Errorf("%s: SET: %v", name, err)
		}
		if v, err := redis.String(c.Do(context.Background(), "GET", "never")); err != nil || v != name {
			t.Errorf("%s: GET = %q, %v; want %q", name, v, err, name)
		}
		c.Close()
	}
	// The options that do not take Never refuse the word.
	if _, err := shard.ParseConfig([]byte("shards: [{addr: \"" + srv.Addr + "\"}]\npool: {read_timeout: never}\n")); !errors.Is(err, shard.ErrBadConfig) {
		t.Fatalf("read_timeout: never in a file: %v; want ErrBadConfig", err)
	}
	if _, err := shard.ParseURL("redis-ring://" + srv.Addr + "?read_timeout=never"); !errors.Is(err, shard.ErrBadConfig) {
		t.Fatalf("read_timeout=never in a URL: %v; want ErrBadConfig", err)
	}
}
