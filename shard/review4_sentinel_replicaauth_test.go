package shard_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/shard"
)

// A read that a Sentinel shard's replica cannot serve goes to the master
// at once (docs/sentinel.md), whatever the replica's failure: a replica
// that refuses the client's credentials (its ACL fell out of step with
// the master's) or its connection (maxclients) is no reason to fail a
// read that the master can serve. Before, such a refusal, which carries
// the server's error reply, was taken for the command's own error reply
// and returned.
func TestSentinelReplicaRefusingLoginSendsReadsToMaster(t *testing.T) {
	set := startSentinelSetApart(t)
	cfg := sentinelConfig(set)
	cfg.Sentinel.ReadFrom = shard.ReadReplicaRandom
	cfg.Health.Interval = 0 // nothing marks the replica down: each read meets the refusal
	c := newClient(t, cfg)
	ctx := context.Background()

	replica, err := set.Replica(0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Do(ctx, "SET", "k", "v"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the replica to hold k and be listed", func() bool {
		v, err := replica.Do("GET", "k")
		st := c.Stats().Sentinel
		return err == nil && v == "v" && len(st) == 1 && slices.Contains(st[0].Replicas, replica.Addr)
	})
	for _, cmd := range [][]string{
		{"ACL", "SETUSER", sentDataUser, "resetpass", ">rotated-on-the-replica-only"},
		{"CLIENT", "KILL", "USER", sentDataUser},
	} {
		if _, err := replica.Do(cmd...); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 20 {
		v, err := redis.String(c.Do(ctx, "GET", "k"))
		if err != nil || v != "v" {
			t.Fatalf("read %d: GET k = %q, %v; want v from the master", i, v, err)
		}
	}
}
