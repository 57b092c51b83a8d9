package shard_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// Stats().Sentinel[].Replicas lists the replicas that reads can use. A
// replica that died (a read failed on it, or health checks saw it fail)
// serves no reads until a query finds it synced; while the Sentinels are
// down no query does. Before, Stats kept listing it all that time, as if
// it served the shard's reads, while every read went to the master.
func TestReview11SentinelDroppedReplicaLeavesStats(t *testing.T) {
	for _, tc := range []struct {
		name   string
		health bool
	}{{"failed read", false}, {"failed health checks", true}} {
		t.Run(tc.name, func(t *testing.T) {
			o := sentinelSetOptions(1)
			set := redistest.StartSentinelsTB(t, o)
			_, replica := shardServers(t, set, 0)
			cfg := sentinelConfig(set)
			cfg.Sentinel.ReadFrom = shard.ReadReplicaRandom
			cfg.Sentinel.RefreshInterval = time.Hour // only failures ask for a query
			if !tc.health {
				cfg.Health = shard.HealthOptions{}
			}
			c := newClient(t, cfg)
			setKOnReplica(t, c, replica)
			ctx := context.Background()

			for i, s := range set.Sentinels {
				if err := s.Stop(); err != nil {
					t.Fatalf("stopping Sentinel %d: %v", i, err)
				}
			}
			if err := replica.Kill(); err != nil {
				t.Fatal(err)
			}
			if tc.health {
				waitFor(t, 30*time.Second, "health checks to see the replica fail", func() bool {
					ns := nodeStats(c, replica.Addr)
					return len(ns) == 1 && ns[0].Errors > 0
				})
			} else {
				// The read fails on the replica and is served by the master.
				if v, err := redis.String(c.Do(ctx, "GET", "k")); err != nil || v != "v" {
					t.Fatalf("GET k = %q, %v; want v, from the master", v, err)
				}
				ns := nodeStats(c, replica.Addr)
				if len(ns) != 1 || ns[0].Errors == 0 {
					t.Fatalf("replica node stats %+v: want the read to have failed there", ns)
				}
			}
			st := c.Stats().Sentinel
			if len(st) != 1 {
				t.Fatalf("%d Sentinel shards in Stats, want 1", len(st))
			}
			if slices.Contains(st[0].Replicas, replica.Addr) {
				t.Errorf("Stats lists replicas %q: want no %s, which serves no reads since it failed", st[0].Replicas, replica.Addr)
			}
			// Reads go to the master; the query a failure asks for fails
			// (no Sentinel answers): the replica stays out.
			for range 5 {
				if v, err := redis.String(c.Do(ctx, "GET", "k")); err != nil || v != "v" {
					t.Fatalf("GET k = %q, %v; want v, from the master", v, err)
				}
			}
			waitFor(t, 30*time.Second, "the shard to be marked stale", func() bool {
				st := c.Stats().Sentinel
				return len(st) == 1 && st[0].Stale
			})
			st = c.Stats().Sentinel
			if len(st) != 1 || slices.Contains(st[0].Replicas, replica.Addr) {
				t.Errorf("Stats %+v with the Sentinels down: want no replica %s, which serves no reads", st, replica.Addr)
			}
		})
	}
}
