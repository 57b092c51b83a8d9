package shard_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// A replica that served reads of Sentinel shard A and was re-pointed
// (REPLICAOF) to the master of shard B, whose Sentinels list it, is
// named after B once it serves B's reads: in Stats, and in its node
// events. Before, it kept the name it was first registered under ("shard-a
// replica host:port"), and a dashboard counted B's reads, and the
// replica's failures, under shard A.
func TestReview11SentinelMovedReplicaTakesItsNewShardsName(t *testing.T) {
	o := sentinelSetOptions(1)
	o.Sentinels = 1
	setA := redistest.StartSentinelsTB(t, o)
	setB := redistest.StartSentinelsTB(t, o)
	_, replica := shardServers(t, setA, 0)
	masterB, _ := shardServers(t, setB, 0)

	var (
		mu     sync.Mutex
		events []shard.NodeEvent
	)
	cfg := sentinelConfig(setA)
	cfg.Shards = []ring.Shard{{Name: "shard-a", Weight: 1}, {Name: "shard-b", Weight: 1}}
	cfg.Sentinel.Addrs = nil
	cfg.Sentinel.Shards = []shard.SentinelShard{
		{Name: "shard-a", MasterName: setA.Names()[0], Addrs: setA.Addrs()},
		{Name: "shard-b", MasterName: setB.Names()[0], Addrs: setB.Addrs()},
	}
	cfg.Sentinel.ReadFrom = shard.ReadReplicaRandom
	cfg.Hooks = &shard.Hooks{NodeState: func(ev shard.NodeEvent) {
		mu.Lock()
		events = append(events, ev)
		mu.Unlock()
	}}
	c := newClient(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	nameOf := func() string {
		ns := nodeStats(c, replica.Addr)
		if len(ns) != 1 {
			return fmt.Sprintf("(listed %d times)", len(ns))
		}
		return ns[0].Node.Name
	}
	wantA, wantB := "shard-a replica "+replica.Addr, "shard-b replica "+replica.Addr
	waitFor(t, 30*time.Second, "the client to list A's replica under A's name", func() bool {
		st := c.Stats().Sentinel
		return len(st) == 2 && slices.Contains(st[0].Replicas, replica.Addr) && nameOf() == wantA
	})

	// A's Sentinel, which would point the replica back, goes down; the
	// replica moves to B's master. The health checks' ROLE takes it off
	// A's list, and B's Sentinel lists it.
	if err := setA.Sentinels[0].Kill(); err != nil {
		t.Fatal(err)
	}
	if _, err := replica.Do("REPLICAOF", "127.0.0.1", fmt.Sprint(masterB.Port)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the replica to sync from B's master", func() bool {
		info, err := replica.Do("INFO", "replication")
		return err == nil && strings.Contains(info, "master_link_status:up") &&
			strings.Contains(info, fmt.Sprintf("master_port:%d", masterB.Port))
	})
	waitFor(t, 60*time.Second, "B's Sentinel to list the moved replica", func() bool {
		_ = c.Refresh(ctx) // A's query fails: its Sentinel is down
		st := c.Stats().Sentinel
		return len(st) == 2 && slices.Contains(st[1].Replicas, replica.Addr)
	})
	// The health checks (every 100ms) find with ROLE that it no longer
	// replicates A's master: it serves B's reads only.
	deadline := time.Now().Add(15 * time.Second)
	for nameOf() != wantB && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if got := nameOf(); got != wantB {
		t.Errorf("the replica serving B's reads is named %q in Stats, want %q", got, wantB)
	}

	// Its node events name it after B too.
	mu.Lock()
	from := len(events)
	mu.Unlock()
	if err := replica.Kill(); err != nil {
		t.Fatal(err)
	}
	var after []shard.NodeEvent
	waitFor(t, 30*time.Second, "a node event of the dead replica", func() bool {
		mu.Lock()
		defer mu.Unlock()
		after = after[:0]
		for _, ev := range events[from:] {
			if ev.Node.Addr == replica.Addr {
				after = append(after, ev)
			}
		}
		return len(after) > 0
	})
	for _, ev := range after {
		if ev.Node.Name != wantB {
			t.Errorf("%s event of the replica names it %q, want %q", ev.Kind, ev.Node.Name, wantB)
		}
	}
}
