package shard_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// A Sentinel that announces host names names the master by the host name
// it monitors it under ("vm:P"); once it stops answering, the other
// Sentinel names the same server by its address ("127.0.0.1:P"). That is
// no failover, as for "localhost": before, the name was not looked up,
// and the client counted a failover, reported the shard's replica
// promoted (from the server to itself) and closed every pooled
// connection of the shard.
func TestReview12SentinelHostNameRespelledIsNoFailover(t *testing.T) {
	host, err := os.Hostname()
	if err != nil {
		t.Skip(err)
	}
	ips, err := net.LookupHost(host)
	if err != nil || len(ips) != 1 || ips[0] != "127.0.0.1" || strings.EqualFold(host, "localhost") {
		t.Skipf("the host name %q resolves to %v, %v: want 127.0.0.1 alone", host, ips, err)
	}
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
		{"SENTINEL", "MONITOR", name, host, fmt.Sprint(master.Port), "2"},
		{"SENTINEL", "SET", name, "auth-user", sentDataUser},
		{"SENTINEL", "SET", name, "auth-pass", sentDataPW},
	} {
		if _, err := first.Do(cmd...); err != nil {
			t.Fatalf("%v: %v", cmd, err)
		}
	}
	byName := fmt.Sprintf("%s:%d", host, master.Port)
	waitFor(t, 30*time.Second, "the first Sentinel to name the master "+byName, func() bool {
		m, err := first.Do("SENTINEL", "GET-MASTER-ADDR-BY-NAME", name)
		return err == nil && m == fmt.Sprintf("%s\n%d", host, master.Port)
	})

	var (
		mu       sync.Mutex
		promoted []shard.NodeEvent
	)
	cfg := sentinelConfig(set)
	cfg.Sentinel.Addrs = []string{first.Addr, set.Sentinels[1].Addr} // the first asked first
	cfg.Sentinel.RefreshInterval = -1                                // queries come from Refresh
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
	if len(st) != 1 || (st[0].Master != byName && st[0].Master != master.Addr) {
		t.Fatalf("Sentinel stats %+v: want the master, %s or %s", st, byName, master.Addr)
	}
	if st[0].Master != byName {
		t.Skipf("the client took the master as %s: no change of spelling to come", st[0].Master)
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
	if len(st) != 1 || st[0].Master != master.Addr {
		t.Fatalf("Sentinel stats %+v: want one shard, its master %s", st, master.Addr)
	}
	if st[0].Failovers != 0 {
		t.Errorf("the master %s answered under another spelling counted %d failovers", master.Addr, st[0].Failovers)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(promoted) != 0 {
		t.Errorf("ReplicaPromoted reported without a failover: %v", promoted)
	}
}
