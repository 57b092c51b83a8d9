package shard_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An XREAD BLOCK that a Sentinel shard's replica serves is ended by the
// server with UNBLOCKED when the replica is pointed at another master (a
// failover's reconfiguration of the replicas, an operator's REPLICAOF):
// it read nothing, and the replica can no longer be trusted to serve it,
// as after LOADING or MASTERDOWN. The read goes to the master and gets
// the entry added there, not the server's UNBLOCKED.
func TestReview21SentinelReplicaBlockingReadSurvivesUnblocked(t *testing.T) {
	set := startSentinelSetApart(t)
	master, replica := shardServers(t, set, 0)
	cfg := sentinelConfig(set)
	cfg.Sentinel.ReadFrom = shard.ReadReplicaRandom
	cfg.Sentinel.RefreshInterval = -1
	c := newClient(t, cfg)
	setKOnReplica(t, c, replica)

	type result struct {
		v   any
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := c.Do(context.Background(), "XREAD", "BLOCK", 60000, "STREAMS", "r21xs", "$")
		done <- result{v, err}
	}()
	waitFor(t, 20*time.Second, "the XREAD blocked on the replica", func() bool { return blockedClients(replica) >= 1 })
	require.Zero(t, blockedClients(master), "the XREAD went to the master, not the replica")

	// The replica follows another master (none listens there): the
	// server unblocks the XREAD with UNBLOCKED.
	_, err := replica.Do("REPLICAOF", "127.0.0.1", strconv.Itoa(1))
	require.NoError(t, err)
	deadline := time.Now().Add(20 * time.Second)
	for blockedClients(master) < 1 && time.Now().Before(deadline) {
		select {
		case r := <-done:
			require.NoError(t, r.err, "the XREAD the replica unblocked")
			t.Fatalf("XREAD returned %v before anything was added", r.v)
		case <-time.After(20 * time.Millisecond):
		}
	}
	_, err = master.Do("XADD", "r21xs", "*", "f", "after")
	require.NoError(t, err)
	select {
	case r := <-done:
		require.NoError(t, r.err, "the XREAD the replica unblocked")
		streams, err := redis.Values(r.v, nil)
		require.NoError(t, err)
		require.Len(t, streams, 1)
		stream, err := redis.Values(streams[0], nil)
		require.NoError(t, err)
		require.Len(t, stream, 2)
		name, _ := redis.String(stream[0], nil)
		assert.Equal(t, "r21xs", name)
		entries, err := redis.Values(stream[1], nil)
		require.NoError(t, err)
		require.Len(t, entries, 1)
		entry, err := redis.Values(entries[0], nil)
		require.NoError(t, err)
		require.Len(t, entry, 2)
		fields, err := redis.Strings(entry[1], nil)
		require.NoError(t, err)
		assert.Equal(t, []string{"f", "after"}, fields)
	case <-time.After(60 * time.Second):
		t.Fatal("XREAD did not return")
	}
}
