package shard_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// With health checks off nothing measures a replica's round trip, so the
// latency policy has no latency to go by: the reads of a Sentinel shard
// must still spread over its replicas instead of all going to the first
// one listed.
func TestSentinelLatencyReadsSpreadWithoutHealthChecks(t *testing.T) {
	opts := sentinelSetOptions(1)
	opts.Replicas = 2
	set := redistest.StartSentinelsTB(t, opts)
	cfg := sentinelConfig(set)
	cfg.Sentinel.ReadFrom = shard.ReadReplicaLatency
	cfg.Health.Interval = -1
	cfg.Sentinel.RefreshInterval = 100 * time.Millisecond
	c := newClient(t, cfg)
	ctx := context.Background()

	master, err := set.Master(0)
	if err != nil {
		t.Fatal(err)
	}
	var replicas []string
	for _, n := range set.Shards[0].Nodes {
		if n.Addr != master.Addr {
			replicas = append(replicas, n.Addr)
		}
	}
	if len(replicas) != 2 {
		t.Fatalf("the set has %d replicas (%v); want 2", len(replicas), replicas)
	}
	waitFor(t, 30*time.Second, "both replicas to be listed", func() bool {
		st := c.Stats().Sentinel
		return len(st) == 1 && slices.Contains(st[0].Replicas, replicas[0]) && slices.Contains(st[0].Replicas, replicas[1])
	})
	commands := func(addr string) int64 {
		for _, n := range c.Stats().Nodes {
			if n.Node.Addr == addr {
				return n.Commands
			}
		}
		return 0
	}
	before := []int64{commands(replicas[0]), commands(replicas[1])}
	const reads = 200
	for i := range reads {
		if _, err := c.Do(ctx, "GET", "k"); err != nil {
			t.Fatalf("read %d: %v", i, err)
		}
	}
	got := []int64{commands(replicas[0]) - before[0], commands(replicas[1]) - before[1]}
	if got[0] == 0 || got[1] == 0 {
		t.Fatalf("of %d reads, replica %s served %d and replica %s %d; want both to serve some", reads, replicas[0], got[0], replicas[1], got[1])
	}
}

// The same in cluster mode: with health checks off, replica-latency reads
// spread over a master's replicas.
func TestClusterLatencyReadsSpreadWithoutHealthChecks(t *testing.T) {
	ctx := context.Background()
	rc := redistest.StartClusterTB(t, 3, 2, redistest.Options{})
	cfg := clusterConfig(rc.Seeds()...)
	cfg.Cluster.ReadFrom = shard.ReadReplicaLatency
	cfg.Health.Interval = -1
	c := newClient(t, cfg)

	const key = "latency:spread"
	master, err := c.Router().Route(key)
	if err != nil {
		t.Fatal(err)
	}
	var replicas []string
	for _, s := range c.Router().(*shard.ClusterRouter).Table().Shards() {
		if s.Master.Addr == master.Addr {
			for _, r := range s.Replicas {
				replicas = append(replicas, r.Addr)
			}
		}
	}
	if len(replicas) != 2 {
		t.Fatalf("master %s has replicas %v, want 2", master.Addr, replicas)
	}
	commands := func(addr string) int64 {
		var n int64
		for _, ns := range nodeStats(c, addr) {
			n += ns.Commands
		}
		return n
	}
	before := []int64{commands(replicas[0]), commands(replicas[1])}
	const reads = 200
	for i := range reads {
		if _, err := c.Do(ctx, "GET", key); err != nil {
			t.Fatalf("read %d: %v", i, err)
		}
	}
	got := []int64{commands(replicas[0]) - before[0], commands(replicas[1]) - before[1]}
	if got[0] == 0 || got[1] == 0 {
		t.Fatalf("of %d reads, replica %s served %d and replica %s %d; want both to serve some", reads, replicas[0], got[0], replicas[1], got[1])
	}
}
