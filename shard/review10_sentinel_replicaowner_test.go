package shard_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// TestReview10SentinelReplicaMovedToAnotherShard: a replica that served
// reads of Sentinel shard A is re-pointed (REPLICAOF) to the master of
// shard B, and B's Sentinels list it, while A's Sentinels cannot be
// asked (down) and no health check runs (nothing tells A that its replica
// moved). Then the replica dies. A read of A's key that fails there must
// go to A's master, which holds the key. Before, the client kept one
// owner per replica address, the shard that listed it last (B): the
// failed read was taken for one of B's and sent to B's master, which
// answered nil for A's key (another shard's data set), and the replica,
// dropped from B's list instead of A's, kept failing A's reads that way.
func TestReview10SentinelReplicaMovedToAnotherShard(t *testing.T) {
	o := sentinelSetOptions(1)
	o.Sentinels = 1
	setA := redistest.StartSentinelsTB(t, o)
	setB := redistest.StartSentinelsTB(t, o)
	masterA, replicaA := shardServers(t, setA, 0)
	masterB, _ := shardServers(t, setB, 0)

	cfg := sentinelConfig(setA)
	cfg.Shards = []ring.Shard{{Name: "shard-a", Weight: 1}, {Name: "shard-b", Weight: 1}}
	cfg.Sentinel.Addrs = nil
	cfg.Sentinel.Shards = []shard.SentinelShard{
		{Name: "shard-a", MasterName: setA.Names()[0], Addrs: setA.Addrs()},
		{Name: "shard-b", MasterName: setB.Names()[0], Addrs: setB.Addrs()},
	}
	cfg.Sentinel.ReadFrom = shard.ReadReplicaRandom
	cfg.Sentinel.RefreshInterval = -1 // queries come from Refresh and failures only
	cfg.Health.Interval = -1          // no ROLE check of the replicas between queries
	c := newClient(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	twin, err := ring.New(ring.Config{Shards: []ring.Shard{
		{Name: "shard-a", Addr: masterA.Addr, Weight: 1}, {Name: "shard-b", Addr: masterB.Addr, Weight: 1}}})
	require.NoError(t, err)
	key := ""
	for i := 0; key == ""; i++ {
		if k := fmt.Sprintf("owner:%d", i); twin.Locate(k) == 0 {
			key = k
		}
	}
	_, err = c.Do(ctx, "SET", key, "a-value")
	require.NoError(t, err)
	waitFor(t, 30*time.Second, "A's replica to hold the key and serve A's reads", func() bool {
		// Queries come from Refresh only: the client's first one may
		// have met the replica before the Sentinel saw it synced.
		_ = c.Refresh(ctx)
		v, err := replicaA.Do("GET", key)
		st := c.Stats().Sentinel
		return err == nil && v == "a-value" && len(st) == 2 && slices.Contains(st[0].Replicas, replicaA.Addr)
	})

	// A's Sentinel goes down; A's replica moves to B's master.
	require.NoError(t, setA.Sentinels[0].Kill())
	_, err = replicaA.Do("REPLICAOF", "127.0.0.1", fmt.Sprint(masterB.Port))
	require.NoError(t, err)
	waitFor(t, 30*time.Second, "the replica to sync from B's master", func() bool {
		info, err := replicaA.Do("INFO", "replication")
		n, err2 := replicaA.Do("EXISTS", key)
		return err == nil && err2 == nil && strings.Contains(info, "master_link_status:up") &&
			strings.Contains(info, fmt.Sprintf("master_port:%d", masterB.Port)) && n == "0"
	})
	waitFor(t, 60*time.Second, "B's Sentinel to list the moved replica, and the client to take it", func() bool {
		_ = c.Refresh(ctx) // A's query fails: its Sentinel is down
		st := c.Stats().Sentinel
		return len(st) == 2 && slices.Contains(st[1].Replicas, replicaA.Addr)
	})

	// The replica dies: A's reads that meet it go to A's master.
	require.NoError(t, replicaA.Kill())
	for i := range 20 {
		v, err := c.Do(ctx, "GET", key)
		require.NoError(t, err, "read %d", i)
		require.Equal(t, []byte("a-value"), v, "read %d of A's key was answered from another shard", i)
	}
}

// TestReview10SentinelPlainShardOnAReplicaKeepsItsWrites: a mixed ring
// whose plain shard is, by mistake, a replica of a Sentinel shard's
// master. The replica refuses writes (READONLY): a write of a key of the
// plain shard must fail with that refusal, not be taken for a failed
// replica read of the Sentinel shard and sent to that shard's master,
// where the key would be written on the wrong shard. Before, the client
// looked the failed call's node up by address, found the Sentinel shard
// that listed the replica, and did just that.
func TestReview10SentinelPlainShardOnAReplicaKeepsItsWrites(t *testing.T) {
	o := sentinelSetOptions(1)
	o.Sentinels = 1
	set := redistest.StartSentinelsTB(t, o)
	master, replica := shardServers(t, set, 0)
	cfg := sentinelConfig(set)
	cfg.Shards = append(cfg.Shards, ring.Shard{Name: "plain", Addr: replica.Addr, Weight: 1})
	cfg.Sentinel.ReadFrom = shard.ReadReplicaRandom
	cfg.Sentinel.FailoverWait = 5 * time.Second
	c := newClient(t, cfg)
	ctx := context.Background()
	waitFor(t, 30*time.Second, "the client to list the replica", func() bool {
		st := c.Stats().Sentinel
		return len(st) == 1 && slices.Contains(st[0].Replicas, replica.Addr)
	})

	twin, err := ring.New(ring.Config{Shards: []ring.Shard{
		{Name: "shard-0", Addr: master.Addr, Weight: 1}, {Name: "plain", Addr: replica.Addr, Weight: 1}}})
	require.NoError(t, err)
	key := ""
	for i := 0; key == ""; i++ {
		if k := fmt.Sprintf("plainrep:%d", i); twin.Locate(k) == 1 {
			key = k
		}
	}
	_, err = c.Do(ctx, "SET", key, "v")
	require.Error(t, err, "a write of the plain shard's key succeeded")
	require.Contains(t, err.Error(), "READONLY")
	n, err := master.Do("EXISTS", key)
	require.NoError(t, err)
	require.Equal(t, "0", n, "the plain shard's key was written on the Sentinel shard's master")
}
