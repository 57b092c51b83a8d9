package shard_test

import (
	"context"
	"testing"

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
	h := startHostNameFlip(t, loopbackHostName(t), 2)
	master, first := h.master, h.first
	c := newClient(t, h.cfg)
	ctx := context.Background()
	skipUnlessMasterByName(t, c, h.byName)
	const n = 2000
	setNumberedKeys(t, c, n)

	scans := func() int {
		t.Helper()
		got, err := master.CommandCalls("scan")
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	before := scans()
	s, seen := beginScan(t, ctx, c, n, "before the change of spelling")

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

	missing, twice := tallyKeys(seen, n)
	if missing != 0 || twice != 0 || len(seen) != n {
		t.Errorf("Scan across a change of spelling reported %d distinct keys of %d: %d missing, %d reported twice", len(seen), n, missing, twice)
	}
	if once == 0 || walked > once+2 {
		t.Errorf("the Scan sent %d SCANs to the master across a change of its spelling, a whole walk %d: the walk started over without a failover", walked, once)
	}
}
