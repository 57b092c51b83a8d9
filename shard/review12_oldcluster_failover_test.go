package shard_test

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// A cluster client built with Config.Migration routes its commands by
// the old cluster while it waits, and that cluster's slot table was read
// again only on a redirect: MOVED, or one naming no address. When a
// master of the old cluster died and its replica took over, no node
// answered MOVED: every command on the dead master's slots was retried
// there until MaxRetryWait and failed, the next one the same, for as long
// as the client waited (the processes on the old cluster alone followed
// the failover at once). A command whose old node refuses connections now
// has the old cluster's topology read again and goes to its slot's
// master there.
func TestReview12OldClusterFailoverWhileWaiting(t *testing.T) {
	ctx := oldClusterContext(t, 120*time.Second)
	oldCluster := redistest.StartClusterTB(t, 3, 1, redistest.Options{})
	c, from := waitingOn(t, oldCluster, func(_, to *shard.Config) { to.Cluster.MaxRetryWait = 5 * time.Second })
	plain := newClient(t, from) // a process still on the old cluster

	key := "r12oldfailover:{" + strconv.FormatUint(rand.Uint64(), 36) + "}"
	onNew := sharedClusterClient(t, key)
	owner, replica := replicatedOnOld(ctx, t, oldCluster, c, plain, key)

	// The old owner dies; its replica takes over.
	require.NoError(t, owner.Stop())
	_, err := replica.Do("CLUSTER", "FAILOVER", "TAKEOVER")
	require.NoError(t, err)
	deadline := time.Now().Add(30 * time.Second)
	for {
		role, err := replica.Do("ROLE")
		if err == nil && strings.HasPrefix(role, "master") {
			if v, err := redis.String(plain.Do(ctx, "GET", key)); err == nil && v == "v1" {
				break // the old cluster serves the key at its new master
			}
		}
		require.True(t, time.Now().Before(deadline), "the replica %s did not take over in 30 s (ROLE %q)", replica.Addr, role)
		time.Sleep(50 * time.Millisecond)
	}

	for i := range 3 {
		v, err := redis.String(c.Do(ctx, "GET", key))
		require.NoError(t, err, "GET %d on the old cluster after its failover, while the client waits", i)
		assert.Equal(t, "v1", v, "GET %d", i)
	}
	_, err = c.Do(ctx, "SET", key, "v2")
	require.NoError(t, err, "SET on the old cluster after its failover")
	v, err := redis.String(plain.Do(ctx, "GET", key))
	require.NoError(t, err)
	assert.Equal(t, "v2", v, "the write is on the old cluster, where the other processes read")
	n, err := redis.Int(onNew.Do(ctx, "EXISTS", key))
	require.NoError(t, err)
	assert.Equal(t, 0, n, "the key was written on the new cluster while the client waits")
}
