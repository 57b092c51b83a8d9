package shard_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// A Sentinel that monitors a master by host name ("localhost", with
// announce-hostnames) names it "localhost:P", while its replica, made a
// replica of "127.0.0.1", reports that spelling as its master-host: two
// spellings of one server. The replica replicates the shard's master with
// its link up (ROLE says so too), and must serve the shard's reads.
// Before, the replica's master was compared with the shard's as strings:
// the replica was left out, Stats listed no replica and every read went
// to the master.
func TestReview11SentinelReplicaOfTheMasterUnderAnotherSpelling(t *testing.T) {
	o := sentinelSetOptions(1)
	o.Sentinels = 1
	set := redistest.StartSentinelsTB(t, o)
	master, replica := shardServers(t, set, 0)
	name := set.Names()[0]
	sent := set.Sentinels[0]
	monitorByHostName(t, sent, name, "localhost", master.Port, 1)
	waitFor(t, 60*time.Second, "the Sentinel to list the master's replica", func() bool {
		reps, err := sent.Do("SENTINEL", "REPLICAS", name)
		return err == nil && strings.Contains(reps, fmt.Sprint(replica.Port)) &&
			strings.Contains(reps, "master-host\n127.0.0.1") && strings.Contains(reps, "master-link-status\nok")
	})

	cfg := sentinelConfig(set)
	cfg.Sentinel.ReadFrom = shard.ReadReplicaRandom
	c := newClient(t, cfg)
	ctx := context.Background()
	if err := c.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	st := c.Stats().Sentinel
	if len(st) != 1 || st[0].Master != "localhost:"+fmt.Sprint(master.Port) {
		t.Fatalf("Sentinel stats %+v: want the master named localhost:%d", st, master.Port)
	}
	if !slices.Contains(st[0].Replicas, replica.Addr) {
		t.Fatalf("Sentinel stats list replicas %q: want the replica %s of the master, under the other spelling", st[0].Replicas, replica.Addr)
	}

	if _, err := c.Do(ctx, "SET", "k", "v"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the replica to hold k", func() bool {
		v, err := replica.Do("GET", "k")
		return err == nil && v == "v"
	})
	before := nodeStats(c, replica.Addr)
	for i := range 20 {
		if v, err := redis.String(c.Do(ctx, "GET", "k")); err != nil || v != "v" {
			t.Fatalf("read %d: GET k = %q, %v; want v", i, v, err)
		}
	}
	after := nodeStats(c, replica.Addr)
	if len(before) != 1 || len(after) != 1 || after[0].Commands-before[0].Commands < 20 {
		t.Errorf("the replica's stats went from %v to %v over 20 reads: want it to serve them", before, after)
	}
}
