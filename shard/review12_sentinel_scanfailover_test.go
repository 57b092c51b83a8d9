package shard_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// A SCAN cursor means nothing to another server: each server's hash
// table (its size, its hash seed) is its own. A Scan of a Sentinel shard
// whose master fails over mid-walk went on with the old master's cursor
// on the new one, which reported a part of its keys only, without an
// error. The walk must start over on the new master, the keys already
// reported not reported again.
func TestReview12SentinelScanFailoverMidWalk(t *testing.T) {
	set := redistest.StartSentinelsTB(t, sentinelSetOptions(1))
	cfg := sentinelConfig(set)
	cfg.Sentinel.FailoverWait = 20 * time.Second
	c := newClient(t, cfg)
	ctx := context.Background()
	old, replica := shardServers(t, set, 0)

	const n = 2000
	fillSynced(t, c, replica, n)

	s, seen := beginScan(t, ctx, c, n, "before the failover")

	waitFor(t, 30*time.Second, "the Sentinel to start a failover", func() bool {
		_, err := set.Sentinels[0].Do("SENTINEL", "FAILOVER", set.Names()[0])
		return err == nil || strings.Contains(err.Error(), "INPROG")
	})
	waitFor(t, 30*time.Second, "the client to follow the new master", func() bool {
		return c.Stats().Sentinel[0].Master == replica.Addr
	})
	if old.Addr == replica.Addr {
		t.Fatal("the master and the replica are one server")
	}

	for s.Next(ctx) {
		seen[s.Key()]++
	}
	if err := s.Err(); err != nil {
		t.Fatalf("Scan across the failover: %v", err)
	}
	missing, twice := tallyKeys(seen, n)
	if missing != 0 || twice != 0 || len(seen) != n {
		t.Errorf("Scan across a failover reported %d distinct keys of %d: %d missing, %d reported twice; want each once", len(seen), n, missing, twice)
	}
}

// When a Sentinel shard's master dies, ForEachShard failed at once with
// the dial's error ("connection refused"), while Do waited for the new
// master within FailoverWait: the function had not run, so waiting is
// safe. It now runs the function once, on the new master. A Scan whose
// walk was under way goes on there from the start, and reports every key
// once.
func TestReview12SentinelForEachShardAndScanWhenMasterDies(t *testing.T) {
	set := redistest.StartSentinelsTB(t, sentinelSetOptions(1))
	cfg := sentinelConfig(set)
	cfg.Sentinel.FailoverWait = 30 * time.Second
	c := newClient(t, cfg)
	ctx := context.Background()
	old, replica := shardServers(t, set, 0)
	const n = 2000
	fillSynced(t, c, replica, n)

	s, seen := beginScan(t, ctx, c, n, "before the failover")
	if err := old.Kill(); err != nil {
		t.Fatal(err)
	}

	var runs atomic.Int32
	var port atomic.Value
	err := c.ForEachShard(ctx, func(ctx context.Context, node shard.Node, conn redis.Conn) error {
		runs.Add(1)
		info, err := redis.String(conn.Do("INFO", "server"))
		port.Store(info)
		return err
	})
	if err != nil {
		t.Fatalf("ForEachShard while the master is failed over: %v (want it to wait for the new master within FailoverWait)", err)
	}
	if got := runs.Load(); got != 1 {
		t.Errorf("the function ran %d times, want once", got)
	}
	if info, _ := port.Load().(string); !strings.Contains(info, fmt.Sprintf("tcp_port:%d\r", replica.Port)) {
		t.Errorf("the function ran on a server other than the promoted replica (port %d)", replica.Port)
	}

	for s.Next(ctx) {
		seen[s.Key()]++
	}
	if err := s.Err(); err != nil {
		t.Fatalf("Scan across the failover: %v", err)
	}
	missing, twice := tallyKeys(seen, n)
	if missing != 0 || twice != 0 || len(seen) != n {
		t.Errorf("Scan across a failover reported %d distinct keys of %d: %d missing, %d reported twice; want each once", len(seen), n, missing, twice)
	}
}

// Without FailoverWait, ForEachShard fails at once on a dead master, as
// a command does; its *NodeError says that a failover may be under way,
// and still matches the dial's error.
func TestReview12SentinelForEachShardErrorSaysFailover(t *testing.T) {
	set := redistest.StartSentinelsTB(t, sentinelSetOptions(1))
	cfg := sentinelConfig(set)
	cfg.Health.Interval = 0
	c := newClient(t, cfg)
	old, _ := shardServers(t, set, 0)
	if err := old.Kill(); err != nil {
		t.Fatal(err)
	}
	ran := false
	err := c.ForEachShard(context.Background(), func(ctx context.Context, node shard.Node, conn redis.Conn) error {
		ran = true
		return nil
	})
	var ne *shard.NodeError
	if !errors.As(err, &ne) || ran {
		t.Fatalf("ForEachShard on a dead master = %v (fn ran: %t), want a *NodeError and no run", err, ran)
	}
	var oe interface{ Timeout() bool }
	if msg := err.Error(); !strings.Contains(msg, "failover may be under way") || !strings.Contains(msg, "connection refused") || strings.Count(msg, "shardis:") != 1 {
		t.Errorf("ForEachShard on a dead master: %q; want it to say a failover may be under way, the cause, and shardis: once", msg)
	}
	if !errors.As(err, &oe) {
		t.Errorf("ForEachShard on a dead master: %v does not wrap the dial's net error", err)
	}
}

// A ForEachShard function that ran and failed on a demoted master
// (READONLY) is not run again, as it may have written; its *NodeError
// says that a failover may be under way and still holds the reply.
func TestReview12SentinelForEachShardRanIsNotRunAgain(t *testing.T) {
	set := redistest.StartSentinelsTB(t, sentinelSetOptions(1))
	cfg := sentinelConfig(set)
	cfg.Sentinel.FailoverWait = 30 * time.Second
	cfg.Sentinel.RefreshInterval = -1
	c := newClient(t, cfg)
	old, next := shardServers(t, set, 0)
	swapRoles(t, old, next)

	var runs atomic.Int32
	err := c.ForEachShard(context.Background(), func(ctx context.Context, node shard.Node, conn redis.Conn) error {
		runs.Add(1)
		_, err := conn.Do("INCR", "runs")
		return err
	})
	var ne *shard.NodeError
	var re redis.Error
	if !errors.As(err, &ne) || !errors.As(err, &re) || !strings.HasPrefix(string(re), "READONLY") {
		t.Fatalf("ForEachShard on a demoted master = %v; want a *NodeError holding the READONLY reply", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "failover may be under way") || strings.Count(msg, "shardis:") != 1 {
		t.Errorf("ForEachShard on a demoted master: %q; want it to say a failover may be under way, and shardis: once", msg)
	}
	if got := runs.Load(); got != 1 {
		t.Errorf("the function ran %d times, want once", got)
	}
}
