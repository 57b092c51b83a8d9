package shard_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// pool.Options.ReadOnly sends READONLY on every connection. A plain
// server refuses it, so a ring client built with it failed every command
// after New had accepted the config. The client sends READONLY itself
// where it reads from replicas (Cluster.ReadFrom), so Validate refuses
// the pool option in both modes.
func TestReview4PoolReadOnlyIsRefused(t *testing.T) {
	srv := redistest.StartTB(t, redistest.Options{})
	ringCfg := shard.Config{Shards: []ring.Shard{{Addr: srv.Addr, Weight: 1}}, Pool: pool.Options{ReadOnly: true}, Health: shard.HealthOptions{Interval: -1}}
	clusterCfg := shard.Config{Mode: shard.ModeCluster, Seeds: []string{srv.Addr}, Pool: pool.Options{ReadOnly: true}}
	for name, cfg := range map[string]shard.Config{"ring": ringCfg, "cluster": clusterCfg} {
		if err := cfg.Validate(); !errors.Is(err, shard.ErrBadConfig) || !strings.Contains(err.Error(), "ReadOnly") {
			t.Errorf("%s: Validate = %v, want ErrBadConfig naming ReadOnly", name, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := shard.New(ctx, ringCfg)
	if err == nil {
		_, doErr := c.Do(ctx, "SET", "review4:ro", "1")
		c.Close()
		t.Fatalf("New accepted Pool.ReadOnly in ring mode; then SET = %v", doErr)
	}
	if !errors.Is(err, shard.ErrBadConfig) {
		t.Fatalf("New = %v, want ErrBadConfig", err)
	}
	// Without it, the same server serves.
	ringCfg.Pool.ReadOnly = false
	c, err = shard.New(ctx, ringCfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Do(ctx, "SET", "review4:ro", "1"); err != nil {
		t.Fatal(err)
	}
}
