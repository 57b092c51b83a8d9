package shard_test

import (
	"context"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A key that a resharding moved to the importing master, its slot still
// migrating: a replica of the source, which knows nothing of the
// migration (MIGRATING is set on its master alone), serves its reads from
// the source's data, where the key is gone. A read from replicas must not
// answer nil for a key that exists.
func TestReview20ReplicaReadOfAMigratedKey(t *testing.T) {
	rc, a, b, rep := startReplicaCluster(t)
	ctx := context.Background()
	c := newClient(t, replicaReadConfig(rc))
	key, slot := keyOnMaster(t, rc, a, "r20rmig")
	_, err := c.Do(ctx, "SET", key, "here")
	require.NoError(t, err)
	// The write reached the replica: reads from it see the key.
	waitFor(t, 10*time.Second, "the replica to hold the key", func() bool {
		conn := direct(t, rep.Addr)
		_, _ = conn.Do("READONLY")
		v, err := redis.String(conn.Do("GET", key))
		return err == nil && v == "here"
	})

	migratingSlot(t, slot, a, b)
	_, err = a.Do("MIGRATE", "127.0.0.1", itoa(b.Port), key, "0", "5000")
	require.NoError(t, err)
	waitReplicaExists(t, rep, "the replica to lose the key", 0, key)
	// A write to the slot's source, answered ASK, says the slot migrates.
	_, err = c.Do(ctx, "SET", key+"other", "x")
	require.NoError(t, err)
	for i := 0; i < 10; i++ {
		v, err := redis.String(c.Do(ctx, "GET", key))
		require.NoError(t, err, "read %d", i)
		assert.Equal(t, "here", v, "read %d", i)
	}
}
