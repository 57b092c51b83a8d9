package shard_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// startSentinelSetApart is startSentinelSet with one shard whose harness
// (and replication) logs in as a user of its own, and the client as
// sentDataUser, so that a test can change the client's account on a node
// without locking the harness out.
func startSentinelSetApart(t *testing.T) *redistest.SentinelSet {
	t.Helper()
	opts := sentinelSetOptions(1)
	opts.Data.Users = []redistest.User{{Name: "harness", Password: "harness-secret"}, {Name: sentDataUser, Password: sentDataPW}}
	return redistest.StartSentinelsTB(t, opts)
}

// shardServers returns the current master and replica of the set's shard i.
func shardServers(t *testing.T, set *redistest.SentinelSet, i int) (master, replica *redistest.Server) {
	t.Helper()
	master, err := set.Master(i)
	if err != nil {
		t.Fatal(err)
	}
	replica, err = set.Replica(i)
	if err != nil {
		t.Fatal(err)
	}
	return master, replica
}

// setKOnReplica sets k = v through c, a client of a one-shard Sentinel
// set, and waits until replica holds it and the client lists replica
// among the shard's replicas: a read from a replica can then find k.
func setKOnReplica(t *testing.T, c *shard.Client, replica *redistest.Server) {
	t.Helper()
	if _, err := c.Do(context.Background(), "SET", "k", "v"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the replica to hold k and be listed", func() bool {
		v, err := replica.Do("GET", "k")
		st := c.Stats().Sentinel
		return err == nil && v == "v" && len(st) == 1 && slices.Contains(st[0].Replicas, replica.Addr)
	})
}

// replicaRefusingLogin starts a set with startSentinelSetApart and a
// client on it that reads from replicas, with hooks (nil: none) and no
// health checks (nothing marks the replica down: each read meets the
// refusal). Once the replica holds k = v and the client lists it, the
// replica stops accepting the client's login: sentDataUser's password is
// changed there alone and its connections are killed. It returns the
// client and the replica.
func replicaRefusingLogin(t *testing.T, hooks *shard.Hooks) (*shard.Client, *redistest.Server) {
	t.Helper()
	set := startSentinelSetApart(t)
	cfg := sentinelConfig(set)
	cfg.Sentinel.ReadFrom = shard.ReadReplicaRandom
	cfg.Health.Interval = 0
	cfg.Hooks = hooks
	c := newClient(t, cfg)

	replica, err := set.Replica(0)
	if err != nil {
		t.Fatal(err)
	}
	setKOnReplica(t, c, replica)
	for _, cmd := range [][]string{
		{"ACL", "SETUSER", sentDataUser, "resetpass", ">rotated-on-the-replica-only"},
		{"CLIENT", "KILL", "USER", sentDataUser},
	} {
		if _, err := replica.Do(cmd...); err != nil {
			t.Fatal(err)
		}
	}
	return c, replica
}
