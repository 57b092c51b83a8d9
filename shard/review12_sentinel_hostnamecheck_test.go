package shard_test

import (
	"context"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// A Sentinel that announces host names names the master "vm:P", while
// the replica replicates from "127.0.0.1:P" (its ROLE, and the master
// address the Sentinels list for it, say so). That is the master: the
// synced replica must serve the shard's reads. Before, the two spellings
// were compared as written: the replica was left off the shard's list
// (Stats listed no replica) and every read went to the master.
func TestReview12SentinelReplicaOfMasterByHostNameServesReads(t *testing.T) {
	h := startHostNameSentinel(t)
	replica, byName := h.replica, h.byName

	cfg := sentinelConfig(h.set)
	cfg.Sentinel.ReadFrom = shard.ReadReplicaRandom
	cfg.Sentinel.RefreshInterval = -1 // queries come from Refresh
	c := newClient(t, cfg)
	ctx := context.Background()
	st := c.Stats().Sentinel
	require.Len(t, st, 1)
	if st[0].Master != byName {
		t.Skipf("the client took the master as %s, not %s", st[0].Master, byName)
	}
	if _, err := c.Do(ctx, "SET", "k", "v"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the replica to hold k", func() bool {
		v, err := replica.Do("GET", "k")
		return err == nil && v == "v"
	})
	// A few queries: the replica's link is up, whatever it was at the first.
	for range 3 {
		require.NoError(t, c.Refresh(ctx))
	}
	st = c.Stats().Sentinel
	require.Len(t, st, 1)
	require.Equal(t, []string{replica.Addr}, st[0].Replicas, "the shard's replicas in Stats (master %s)", st[0].Master)
	for range 20 {
		v, err := redis.String(c.Do(ctx, "GET", "k"))
		require.NoError(t, err)
		require.Equal(t, "v", v)
	}
	var onReplica int64
	for _, n := range c.Stats().Nodes {
		if n.Node.Addr == replica.Addr {
			onReplica += n.Commands
		}
	}
	require.GreaterOrEqual(t, onReplica, int64(20), "GETs served by the replica")
}

// Right after a failover that +switch-master announced as 127.0.0.1:P1
// -> 127.0.0.1:P2, a Sentinel that has not heard of it and announces host
// names names the old master "vm:P1", which still says it is a master. A
// query must not install it over the announced master (which says it is
// the master): writes sent to it would be lost when it is made a replica.
// Before, the guard compared "vm:P1" with "127.0.0.1:P1" as written, saw
// another server, and switched the shard back to the old master (a second
// failover event, writes going to the old master).
func TestReview12SentinelNoSwitchBackToOldMasterByHostName(t *testing.T) {
	host := loopbackHostName(t)
	f := failedOverBySoleSentinel(t)
	s0, name, c, old, next, events := f.s0, f.name, f.c, f.old, f.next, f.events
	// The Sentinel forgets the failover and names the old master by host
	// name; the old master says it is a master.
	_, err := old.Do("REPLICAOF", "NO", "ONE")
	require.NoError(t, err)
	monitorByHostName(t, s0, name, host, old.Port, 1)

	before := c.Stats().Sentinel[0].Queries
	waitFor(t, 5*time.Second, "three more queries", func() bool {
		return c.Stats().Sentinel[0].Queries >= before+3
	})
	require.Equal(t, []string{old.Addr + " -> " + next.Addr}, events(), "master changes the client installed")
	require.Equal(t, next.Addr, c.Stats().Sentinel[0].Master)
}
