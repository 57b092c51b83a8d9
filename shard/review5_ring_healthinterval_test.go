package shard_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// A health interval of a few nanoseconds would run the health checks back
// to back, a PING storm on every node and a busy core in the client: it
// is a configuration error, in Go, in a URL and in a file.
func TestHealthIntervalTooShortIsABadConfig(t *testing.T) {
	srv := redistest.StartTB(t, redistest.Options{})
	cfg := ringConfig([]*redistest.Server{srv})
	cfg.Health.Interval = time.Nanosecond
	c, err := shard.New(context.Background(), cfg)
	if err == nil {
		c.Close()
		t.Fatal("New accepted a 1ns health interval")
	}
	if !errors.Is(err, shard.ErrBadConfig) {
		t.Fatalf("New: %v; want an error matching ErrBadConfig", err)
	}
	if _, err := shard.ParseURL("redis-ring://" + srv.Addr + "?health_interval=1us"); !errors.Is(err, shard.ErrBadConfig) {
		t.Fatalf("ParseURL with health_interval=1us: %v; want an error matching ErrBadConfig", err)
	}
	if _, err := shard.ParseConfig([]byte("shards: [{addr: \"" + srv.Addr + "\"}]\nhealth: {interval: 1ms}\n")); !errors.Is(err, shard.ErrBadConfig) {
		t.Fatalf("ParseConfig with health.interval 1ms: %v; want an error matching ErrBadConfig", err)
	}
	// 10ms and more, 0 (the default) and negative (off) stay valid.
	for _, d := range []time.Duration{0, -1, 10 * time.Millisecond, time.Second} {
		cfg.Health.Interval = d
		if err := cfg.Validate(); err != nil {
			t.Errorf("health interval %v: %v; want it accepted", d, err)
		}
	}
}
