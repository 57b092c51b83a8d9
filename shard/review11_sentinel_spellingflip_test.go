package shard_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// Two Sentinels that spell the same master differently (one monitors it
// by host name with announce-hostnames, "localhost:P", the other by IP,
// "127.0.0.1:P"): when the first stops answering, the second's answer
// names the master the client already writes to. That is no failover:
// before, the client counted one in Stats, reported the shard's
// replica promoted (from the server to itself) and closed every pooled
// connection of the shard.
func TestReview11SentinelMasterRespelledIsNoFailover(t *testing.T) {
	o := sentinelSetOptions(1)
	o.Sentinels = 2
	set := redistest.StartSentinelsTB(t, o)
	master, _ := shardServers(t, set, 0)
	name := set.Names()[0]
	first := set.Sentinels[0]
	for _, cmd := range [][]string{
		{"SENTINEL", "CONFIG", "SET", "resolve-hostnames", "yes"},
		{"SENTINEL", "CONFIG", "SET", "announce-hostnames", "yes"},
		{"SENTINEL", "REMOVE", name},
		{"SENTINEL", "MONITOR", name, "localhost", fmt.Sprint(master.Port), "2"},
		{"SENTINEL", "SET", name, "auth-user", sentDataUser},
		{"SENTINEL", "SET", name, "auth-pass", sentDataPW},
	} {
		if _, err := first.Do(cmd...); err != nil {
			t.Fatalf("%v: %v", cmd, err)
		}
	}
	waitFor(t, 30*time.Second, "the first Sentinel to name the master localhost", func() bool {
		m, err := first.Do("SENTINEL", "GET-MASTER-ADDR-BY-NAME", name)
		return err == nil && m == fmt.Sprintf("localhost\n%d", master.Port)
	})

	var (
		mu       sync.Mutex
		promoted []shard.NodeEvent
	)
	cfg := sentinelConfig(set)
	cfg.Sentinel.RefreshInterval = -1 // queries come from Refresh
	cfg.Hooks = &shard.Hooks{NodeState: func(ev shard.NodeEvent) {
		if ev.Kind == shard.ReplicaPromoted {
			mu.Lock()
			promoted = append(promoted, ev)
			mu.Unlock()
		}
	}}
	c := newClient(t, cfg)
	ctx := context.Background()
	st := c.Stats().Sentinel
	if len(st) != 1 || st[0].Master != fmt.Sprintf("localhost:%d", master.Port) {
		t.Fatalf("Sentinel stats %+v: want the first Sentinel's answer, localhost:%d", st, master.Port)
	}
	if _, err := c.Do(ctx, "SET", "k", "v"); err != nil {
		t.Fatal(err)
	}

	if err := first.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := c.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	st = c.Stats().Sentinel
	if len(st) != 1 {
		t.Fatalf("Sentinel stats %+v: want one shard", st)
	}
	if st[0].Failovers != 0 {
		t.Errorf("the master %s answered under another spelling counted %d failovers (master now %s)", master.Addr, st[0].Failovers, st[0].Master)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(promoted) != 0 {
		t.Errorf("ReplicaPromoted reported without a failover: %v", promoted)
	}
}
