package shard_test

import (
	"context"
	"testing"
)

// A Sentinel that announces host names names the master by the host name
// it monitors it under ("vm:P"); once it stops answering, the other
// Sentinel names the same server by its address ("127.0.0.1:P"). That is
// no failover, as for "localhost": before, the name was not looked up,
// and the client counted a failover, reported the shard's replica
// promoted (from the server to itself) and closed every pooled
// connection of the shard.
func TestReview12SentinelHostNameRespelledIsNoFailover(t *testing.T) {
	h := startHostNameFlip(t, loopbackHostName(t), 2)
	master, first, byName := h.master, h.first, h.byName
	cfg := h.cfg
	promoted := recordPromoted(&cfg)
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
	if got := promoted(); len(got) != 0 {
		t.Errorf("ReplicaPromoted reported without a failover: %v", got)
	}
}
