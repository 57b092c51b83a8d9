package shard_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A client that only reads a migrating slot, from replicas, meets no ASK
// of the source's: the replica, blind to the migration, answers nil for
// a key the resharding already moved to the importing master. Such an
// answer must not reach the caller for a key that exists.
func TestReview20ReplicaOnlyReadOfAMigratedKey(t *testing.T) {
	rc, a, b, rep := startReplicaCluster(t)
	ctx := context.Background()
	key, slot := keyOnMaster(t, rc, a, "r20romig")
	stay := key + "stay" // the same slot (key is a hash tag), left on the source
	src := direct(t, a.Addr)
	_, err := src.Do("SET", key, "moved")
	require.NoError(t, err)
	_, err = src.Do("SET", stay, "kept")
	require.NoError(t, err)
	waitReplicaExists(t, rep, "the replica to hold the keys", 2, key, stay)

	c := newClient(t, replicaReadConfig(rc))

	migratingSlot(t, slot, a, b)
	_, err = a.Do("MIGRATE", "127.0.0.1", itoa(b.Port), key, "0", "5000")
	require.NoError(t, err)
	waitReplicaExists(t, rep, "the replica to lose the moved key", 0, key)
	// The client writes nothing: no ASK tells it the slot migrates.
	for i := 0; i < 5; i++ {
		v, err := redis.String(c.Do(ctx, "GET", key))
		require.NoError(t, err, "read %d", i)
		assert.Equal(t, "moved", v, "read %d of the moved key", i)
		v, err = redis.String(c.Do(ctx, "GET", stay))
		require.NoError(t, err, "read %d", i)
		assert.Equal(t, "kept", v, "read %d of the key left on the source", i)
		n, err := redis.Int(c.Do(ctx, "EXISTS", key))
		require.NoError(t, err, "read %d", i)
		assert.Equal(t, 1, n, "read %d: EXISTS of the moved key", i)
		_, err = redis.String(c.Do(ctx, "GET", key+"absent"))
		assert.ErrorIs(t, err, redis.ErrNil, "read %d of a key that exists nowhere", i)
	}
}

// Reads of missing keys from replicas, no slot migrating: the master is
// asked to confirm a slot's empty answer once in a while, not at every
// such read (a cache's misses would all reach the masters).
func TestReview20ReplicaNilReadsAreNotAllConfirmed(t *testing.T) {
	rc, a, _, rep := startReplicaCluster(t)
	ctx := context.Background()
	key, _ := keyOnMaster(t, rc, a, "r20rnil")
	c := newClient(t, replicaReadConfig(rc))

	calls := func(s *redistest.Server) int {
		n, err := strconv.Atoi(commandCalls(t, s, "get"))
		require.NoError(t, err)
		return n
	}
	atMaster, atReplica := calls(a), calls(rep)
	const reads = 20
	for i := 0; i < reads; i++ {
		_, err := redis.String(c.Do(ctx, "GET", key+itoa(i)))
		require.ErrorIs(t, err, redis.ErrNil, "read %d", i)
	}
	assert.Equal(t, reads, calls(rep)-atReplica, "GETs the replica served")
	assert.Less(t, calls(a)-atMaster, reads/2, "GETs the master was asked to confirm")
}

// A replica's empty answer whose master cannot confirm it (dead, no
// replica promoted yet) stands, as every replica read does without its
// master: the read must not wait for a failover and fail.
func TestReview20ReplicaNilReadStandsWithoutItsMaster(t *testing.T) {
	rc, a, _, rep := startReplicaCluster(t)
	ctx := context.Background()
	key, _ := keyOnMaster(t, rc, a, "r20rdead")
	src := direct(t, a.Addr)
	_, err := src.Do("SET", key, "v")
	require.NoError(t, err)
	waitReplicaExists(t, rep, "the replica to hold the key", 1, key)
	cfg := replicaReadConfig(rc)
	// Well within the cluster's failover: a read that waits for the
	// master fails before a replica is promoted.
	cfg.Cluster.MaxRetryWait = time.Second
	c := newClient(t, cfg)
	require.NoError(t, a.Kill())

	v, err := redis.String(c.Do(ctx, "GET", key))
	require.NoError(t, err)
	assert.Equal(t, "v", v, "a key the replica holds")
	_, err = redis.String(c.Do(ctx, "GET", key+"absent"))
	assert.ErrorIs(t, err, redis.ErrNil, "a key that exists nowhere, read from the replica")
}
