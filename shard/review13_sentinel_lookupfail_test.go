package shard_test

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/addrkey"
	"github.com/shardis/shardis/shard"
)

// errNoDNS is what the resolver of these tests says during an outage.
var errNoDNS = errors.New("lookup: server misbehaving")

// A Sentinel that announces host names names the master "vm:P"; once it
// stops answering, the other names the same server "127.0.0.1:P". While
// the resolver fails (a brief DNS outage), whether the two spellings name
// one server is not known: that is no failover. Before, the comparison
// said "two servers": the client counted a failover, reported it, and
// closed the shard's pools (every pooled connection lost).
func TestReview13SentinelLookupFailureIsNoFailover(t *testing.T) {
	host := loopbackHostName(t)
	h := startHostNameFlip(t, host, 1)
	master, first, byName := h.master, h.first, h.byName
	c := newClient(t, h.cfg)
	events := failoverLog(c)
	ctx := context.Background()
	skipUnlessMasterByName(t, c, byName)
	clientID := pooledClientID(t, c)
	id := clientID()
	if again := clientID(); again != id {
		t.Fatalf("two CLIENT IDs in a row on an idle client: %d, %d (no pooled connection reused)", id, again)
	}

	var failing atomic.Bool
	failing.Store(true)
	restore := addrkey.SetLookupForTest(func(ctx context.Context, h string) ([]netip.Addr, error) {
		if failing.Load() {
			return nil, errNoDNS
		}
		if strings.EqualFold(h, host) {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}
		return nil, errors.New("no such host")
	})
	t.Cleanup(restore)

	if err := first.Kill(); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := c.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
	}
	st := c.Stats().Sentinel
	if len(st) != 1 {
		t.Fatalf("Sentinel stats %+v: want one shard", st)
	}
	if st[0].Failovers != 0 || len(events()) != 0 {
		t.Errorf("the resolver failing, %s named %s: %d failovers counted, master changes %v; want none", byName, master.Addr, st[0].Failovers, events())
	}
	if got := clientID(); got != id {
		t.Errorf("the resolver failing: the pooled connection (CLIENT ID %d) was closed, now %d", id, got)
	}

	// The resolver answers again: the new spelling is taken, still no
	// failover, still the same connection.
	failing.Store(false)
	waitFor(t, 10*time.Second, "the client to take the master as "+master.Addr, func() bool {
		if err := c.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		st := c.Stats().Sentinel
		return len(st) == 1 && st[0].Master == master.Addr
	})
	if st := c.Stats().Sentinel; st[0].Failovers != 0 || len(events()) != 0 {
		t.Errorf("after the resolver came back: %d failovers counted, master changes %v; want none", st[0].Failovers, events())
	}
	if got := clientID(); got != id {
		t.Errorf("after the resolver came back: the pooled connection (CLIENT ID %d) was closed, now %d", id, got)
	}
}

// A failover while the resolver fails, of a master the Sentinels name by
// host name, is still followed at once.
func TestReview13SentinelFailoverWhileLookupFails(t *testing.T) {
	h := startHostNameSentinel(t)
	next, name, s := h.replica, h.name, h.s
	c, _, _ := queryingSentinelClient(t, h.set, []string{s.Addr})
	skipUnlessMasterByName(t, c, h.byName)
	t.Cleanup(addrkey.SetLookupForTest(func(context.Context, string) ([]netip.Addr, error) { return nil, errNoDNS }))

	// The Sentinel takes a moment to see the replica fit for promotion.
	waitFor(t, 30*time.Second, "SENTINEL FAILOVER to be accepted", func() bool {
		_, err := s.Do("SENTINEL", "FAILOVER", name)
		return err == nil
	})
	start := time.Now()
	waitFor(t, 30*time.Second, "the client to follow the failover to "+next.Addr, func() bool {
		st := c.Stats().Sentinel
		return len(st) == 1 && st[0].Master == next.Addr
	})
	t.Logf("followed the failover in %v", time.Since(start))
	if st := c.Stats().Sentinel; st[0].Failovers < 1 {
		t.Errorf("a failover to %s counted %d times", next.Addr, st[0].Failovers)
	}
	v, err := redis.String(c.Do(context.Background(), "SET", "k", "v"))
	if err != nil || v != "OK" {
		t.Fatalf("SET after the failover: %q, %v", v, err)
	}
	if got, err := next.Do("GET", "k"); err != nil || got != "v" {
		t.Errorf("the new master %s holds k = %q, %v", next.Addr, got, err)
	}
}

// A replica that replicates "127.0.0.1:P" serves the reads of a master
// the Sentinels name "vm:P". While the resolver fails, the two cannot be
// tied: that is no evidence that the replica follows another master, and
// it goes on serving reads, through health checks and queries alike.
func TestReview13SentinelLookupFailureKeepsReplica(t *testing.T) {
	h := startHostNameSentinel(t)
	replica := h.replica
	cfg := sentinelConfig(h.set)
	cfg.Sentinel.ReadFrom = shard.ReadReplicaRandom
	cfg.Sentinel.RefreshInterval = -1 // queries come from Refresh
	c := newClient(t, cfg)
	ctx := context.Background()
	skipUnlessMasterByName(t, c, h.byName)
	waitFor(t, 30*time.Second, "the replica to be listed", func() bool {
		if err := c.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		st := c.Stats().Sentinel
		return len(st) == 1 && slices.Contains(st[0].Replicas, replica.Addr)
	})

	t.Cleanup(addrkey.SetLookupForTest(func(context.Context, string) ([]netip.Addr, error) { return nil, errNoDNS }))
	roles, err := replica.CommandCalls("role")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := c.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		if st := c.Stats().Sentinel; len(st) != 1 || !slices.Contains(st[0].Replicas, replica.Addr) {
			t.Fatalf("query %d with the resolver failing: Sentinel stats %+v, want the replica %s listed", i, st, replica.Addr)
		}
	}
	waitFor(t, 10*time.Second, "five more ROLE checks of the replica", func() bool {
		n, err := replica.CommandCalls("role")
		return err == nil && n >= roles+5
	})
	if st := c.Stats().Sentinel; len(st) != 1 || !slices.Contains(st[0].Replicas, replica.Addr) || st[0].Failovers != 0 {
		t.Errorf("health checks with the resolver failing: Sentinel stats %+v, want the replica %s listed, no failover", st, replica.Addr)
	}
}
