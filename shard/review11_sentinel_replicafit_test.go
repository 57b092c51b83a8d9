package shard_test

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/shard"
)

// A replica whose health check failed since a query checked it may have
// restarted, and comes back empty: it serves no read until a query checks
// it again, even while the failures are too few to mark it down and no
// health check has succeeded on it since (the ROLE check after a
// successful one would drop it too). Here the replica's health checks
// fail (FailureLimit is never reached) while it restarts empty and cannot
// sync; every read of k must still return the master's value.
func TestReview11SentinelReplicaFailedSinceItsQueryServesNoReads(t *testing.T) {
	set := startSentinelSetApart(t)
	master, replica := shardServers(t, set, 0)
	cfg := sentinelConfig(set)
	cfg.Sentinel.ReadFrom = shard.ReadReplicaRandom
	cfg.Sentinel.RefreshInterval = -1 // no periodic query checks the replica again
	cfg.Health.FailureLimit = 1 << 20 // the failures never mark it down
	var failing atomic.Bool
	cfg.Health.Check = func(ctx context.Context, conn redis.Conn, node shard.Node) error {
		if node.Addr == replica.Addr && failing.Load() {
			return errors.New("health check of the replica failed")
		}
		return shard.CheckPing(ctx, conn, node)
	}
	c := newClient(t, cfg)
	ctx := context.Background()

	setKOnReplica(t, c, replica)
	errorsOf := func() int64 {
		ns := nodeStats(c, replica.Addr)
		if len(ns) != 1 {
			t.Fatalf("Stats lists the replica %s %d times, want once", replica.Addr, len(ns))
		}
		return ns[0].Errors
	}
	// The replica serves the reads now.
	before := nodeStats(c, replica.Addr)
	for i := range 20 {
		if v, err := redis.String(c.Do(ctx, "GET", "k")); err != nil || v != "v" {
			t.Fatalf("read %d before the restart: GET k = %q, %v; want v", i, v, err)
		}
	}
	after := nodeStats(c, replica.Addr)
	if len(before) != 1 || len(after) != 1 || after[0].Commands-before[0].Commands < 20 {
		t.Fatalf("the replica's commands went from %v to %v over 20 reads: the replica does not serve them", before, after)
	}

	base := errorsOf()
	failing.Store(true)
	waitFor(t, 10*time.Second, "a failed health check of the replica", func() bool { return errorsOf() > base })
	if n := nodeStats(c, replica.Addr); len(n) != 1 || n[0].Down {
		t.Fatalf("replica stats %v: want it listed and not down", n)
	}
	// Once restarted the replica cannot sync: it stays empty.
	if _, err := master.Do("ACL", "SETUSER", "harness", "-psync", "-sync"); err != nil {
		t.Fatal(err)
	}
	if err := replica.Restart(); err != nil {
		t.Fatal(err)
	}
	if n, err := replica.Do("DBSIZE"); err != nil || n != "0" {
		t.Fatalf("restarted replica: DBSIZE = %q, %v; want an empty replica", n, err)
	}
	readsSeeMaster(ctx, t, c, "the replica failed a health check since a query checked it, and restarted empty")
}

// A replica that the health checks marked down serves no read, even when
// a query has listed it since (the Sentinels, and ROLE, find it a synced
// replica; the user's health check finds it unfit): its failures then
// counted before the query checked it, and only its being down keeps the
// reads off it until its next failed check. Sent there, a read fails fast
// on the down node, drops the replica, asks for another query and goes
// to the master: a failed attempt on every such read's way.
func TestReview11SentinelReplicaMarkedDownServesNoReadsAfterAQuery(t *testing.T) {
	set := startSentinelSetApart(t)
	_, replica := shardServers(t, set, 0)
	cfg := sentinelConfig(set)
	cfg.Sentinel.ReadFrom = shard.ReadReplicaRandom
	cfg.Sentinel.RefreshInterval = -1 // queries only when asked
	cfg.Health.Interval = time.Second // few checks: the reads fall between two
	var failing atomic.Bool
	cfg.Health.Check = func(ctx context.Context, conn redis.Conn, node shard.Node) error {
		if node.Addr == replica.Addr && failing.Load() {
			return errors.New("the replica is unfit by the user's check")
		}
		return shard.CheckPing(ctx, conn, node)
	}
	c := newClient(t, cfg)
	ctx := context.Background()

	setKOnReplica(t, c, replica)
	failing.Store(true)
	waitFor(t, 20*time.Second, "the health checks to mark the replica down", func() bool {
		n := nodeStats(c, replica.Addr)
		return len(n) == 1 && n[0].Down
	})
	if err := c.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	st := c.Stats().Sentinel
	if len(st) != 1 || !slices.Contains(st[0].Replicas, replica.Addr) {
		t.Fatalf("Sentinel stats %+v: want the query to list the replica %s", st, replica.Addr)
	}
	before := nodeStats(c, replica.Addr)
	for i := range 20 {
		if v, err := redis.String(c.Do(ctx, "GET", "k")); err != nil || v != "v" {
			t.Fatalf("read %d: GET k = %q, %v; want v", i, v, err)
		}
	}
	after := nodeStats(c, replica.Addr)
	if len(before) != 1 || len(after) != 1 {
		t.Fatalf("the replica's stats went from %v to %v: want it listed", before, after)
	}
	if sent := after[0].Commands - before[0].Commands; sent != 0 {
		t.Errorf("%d of 20 reads went to the replica marked down", sent)
	}
}
