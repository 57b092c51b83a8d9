package shard_test

import (
	"context"
	"fmt"
	"testing"
)

// Two Sentinels that spell the same master differently (one monitors it
// by host name with announce-hostnames, "localhost:P", the other by IP,
// "127.0.0.1:P"): when the first stops answering, the second's answer
// names the master the client already writes to. That is no failover:
// before, the client counted one in Stats, reported the shard's
// replica promoted (from the server to itself) and closed every pooled
// connection of the shard.
func TestReview11SentinelMasterRespelledIsNoFailover(t *testing.T) {
	h := startHostNameFlip(t, "localhost", 2)
	master, first := h.master, h.first
	cfg := h.cfg
	promoted := recordPromoted(&cfg)
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
	if got := promoted(); len(got) != 0 {
		t.Errorf("ReplicaPromoted reported without a failover: %v", got)
	}
}
