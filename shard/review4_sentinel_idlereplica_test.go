package shard_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/shard"
)

// TestSentinelRestartedReplicaServesNoReads for a client that sends the
// replica nothing while it is away: only the health checks see it fail.
// Once it answers PING again it is still empty (it cannot sync), and a
// read must not be answered by it before a query has checked it again.
func TestSentinelReplicaThatFailedHealthChecksServesNoReads(t *testing.T) {
	set := startSentinelSetApart(t)
	cfg := sentinelConfig(set)
	cfg.Sentinel.ReadFrom = shard.ReadReplicaRandom
	cfg.Sentinel.RefreshInterval = -1 // no periodic query checks the replica meanwhile
	c := newClient(t, cfg)
	ctx := context.Background()

	master, replica := shardServers(t, set, 0)
	setKOnReplica(t, c, replica)
	node := func() (shard.NodeStats, bool) {
		if ns := nodeStats(c, replica.Addr); len(ns) > 0 {
			return ns[0], true
		}
		return shard.NodeStats{}, false
	}
	if _, err := master.Do("ACL", "SETUSER", "harness", "-psync", "-sync"); err != nil {
		t.Fatal(err)
	}
	if err := replica.Kill(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "health checks to mark the replica down", func() bool {
		n, ok := node()
		return ok && n.Down
	})
	if err := replica.Restart(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "health checks to mark the replica up", func() bool {
		n, ok := node()
		return ok && !n.Down
	})
	if n, err := replica.Do("DBSIZE"); err != nil || n != "0" {
		t.Fatalf("restarted replica: DBSIZE = %q, %v; want an empty replica", n, err)
	}
	for i := range 50 {
		v, err := redis.String(c.Do(ctx, "GET", "k"))
		if errors.Is(err, redis.ErrNil) || err != nil || v != "v" {
			t.Fatalf("read %d: GET k = %q, %v; want v", i, v, err)
		}
	}
}
