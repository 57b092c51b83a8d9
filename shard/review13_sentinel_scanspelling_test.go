package shard_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// A Scan of a Sentinel shard starts its walk over when the shard's
// master changes mid-walk. A Sentinel that announces host names names
// the master "vm:P"; once it stops answering, the other names the same
// server "127.0.0.1:P". That is no failover (the client counts none),
// but the Scan compared the two spellings as written and walked the
// master again from cursor 0: each such change of spelling cost a whole
// walk's worth of SCAN calls more.
func TestReview13SentinelScanHostNameRespelledKeepsWalk(t *testing.T) {
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

	cfg := sentinelConfig(set)
	cfg.Sentinel.Addrs = []string{first.Addr, set.Sentinels[1].Addr} // the first asked first
	cfg.Sentinel.RefreshInterval = -1                                // queries come from Refresh
	c := newClient(t, cfg)
	ctx := context.Background()
	if st := c.Stats().Sentinel; len(st) != 1 || st[0].Master != byName {
		t.Skipf("Sentinel stats %+v: want the master taken as %s", st, byName)
	}
	const n = 2000
	p := c.Pipeline()
	for i := range n {
		p.Send("SET", fmt.Sprintf("k%d", i), "v")
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}

	scans := func() int {
		t.Helper()
		got, err := master.CommandCalls("scan")
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	before := scans()
	seen := map[string]int{}
	s := c.Scan(shard.ScanOptions{Count: 10})
	for len(seen) < n/4 && s.Next(ctx) {
		seen[s.Key()]++
	}
	if err := s.Err(); err != nil || len(seen) < n/4 {
		t.Fatalf("before the change of spelling: %d keys, %v", len(seen), err)
	}

	if err := first.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := c.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	st := c.Stats().Sentinel
	if len(st) != 1 || st[0].Master != master.Addr || st[0].Failovers != 0 {
		t.Fatalf("Sentinel stats %+v: want one shard, its master %s, no failover", st, master.Addr)
	}

	steps := 0
	for s.Next(ctx) {
		seen[s.Key()]++
		if steps++; steps > 4*n {
			t.Fatalf("the Scan did not end after %d more keys", steps)
		}
	}
	if err := s.Err(); err != nil {
		t.Fatalf("Scan across the change of spelling: %v", err)
	}
	walked := scans() - before

	// A whole walk of the same data, with no change of spelling.
	before = scans()
	whole := 0
	w := c.Scan(shard.ScanOptions{Count: 10})
	for w.Next(ctx) {
		whole++
	}
	if err := w.Err(); err != nil || whole != n {
		t.Fatalf("a whole walk: %d keys, %v", whole, err)
	}
	once := scans() - before

	missing, twice := 0, 0
	for i := range n {
		switch seen[fmt.Sprintf("k%d", i)] {
		case 0:
			missing++
		case 1:
		default:
			twice++
		}
	}
	if missing != 0 || twice != 0 || len(seen) != n {
		t.Errorf("Scan across a change of spelling reported %d distinct keys of %d: %d missing, %d reported twice", len(seen), n, missing, twice)
	}
	if once == 0 || walked > once+2 {
		t.Errorf("the Scan sent %d SCANs to the master across a change of its spelling, a whole walk %d: the walk started over without a failover", walked, once)
	}
}
