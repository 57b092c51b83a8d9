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
// the old cluster while it waits. When a master of the old cluster hangs
// (a frozen process: it accepts connections and answers nothing), its
// commands time out; the old cluster fails it over to its replica. A
// client on the old cluster alone reads that cluster's topology again on
// the timeout and follows the failover on its next command. The waiting
// client's timeout re-read nothing of the old cluster: with no health
// check to mark the frozen node down, every later command on its slots
// timed out there too, for as long as the client waited.
func TestReview12OldClusterHungMasterFailover(t *testing.T) {
	ctx := oldClusterContext(t, 180*time.Second)
	oldCluster := redistest.StartClusterTB(t, 3, 1, redistest.Options{})
	c, from := waitingOn(t, oldCluster, func(from, to *shard.Config) {
		from.Health.Interval = -1 // no health checks: nothing marks the frozen node down
		to.Health.Interval = -1
		to.Cluster.MaxRetryWait = 5 * time.Second
	})
	plain := newClient(t, from) // a process still on the old cluster, with the same options

	key := "r12oldhung:{" + strconv.FormatUint(rand.Uint64(), 36) + "}"
	onNew := sharedClusterClient(t, key)
	owner, replica := replicatedOnOld(ctx, t, oldCluster, c, plain, key)
	// Both clients have a connection to the owner that a later command
	// would take.
	v, err := redis.String(plain.Do(ctx, "GET", key))
	require.NoError(t, err)
	require.Equal(t, "v1", v)

	// The old owner freezes; its replica takes over.
	require.NoError(t, owner.Pause())
	t.Cleanup(func() { _ = owner.Resume() }) // before the cluster stops
	_, err = replica.Do("CLUSTER", "FAILOVER", "TAKEOVER")
	require.NoError(t, err)
	deadline := time.Now().Add(60 * time.Second)
	plainTimeouts := 0
	for {
		role, err := replica.Do("ROLE")
		if err == nil && strings.HasPrefix(role, "master") {
			v, err := redis.String(plain.Do(ctx, "GET", key))
			if err == nil && v == "v1" {
				break // the old cluster serves the key at its new master
			}
			if isTimeout(err) {
				plainTimeouts++
			}
		}
		require.True(t, time.Now().Before(deadline), "the client on the old cluster did not follow the failover in 60 s (ROLE %q, %d timeouts)", role, plainTimeouts)
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("the client on the old cluster followed after %d timeouts", plainTimeouts)

	// The waiting client: its first command on the slot may time out at
	// the frozen node, as the other client's did; the next ones must be
	// served by the new master.
	timeouts := 0
	deadline = time.Now().Add(30 * time.Second)
	for {
		v, err := redis.String(c.Do(ctx, "GET", key))
		if err == nil {
			require.Equal(t, "v1", v)
			break
		}
		require.True(t, isTimeout(err), "GET while the client waits: %v", err)
		timeouts++
		require.True(t, time.Now().Before(deadline), "GET on the old cluster after its failover still times out after %d tries: %v", timeouts, err)
	}
	t.Logf("the waiting client followed after %d timeouts", timeouts)
	assert.LessOrEqual(t, timeouts, 2, "GETs that timed out at the frozen node after the failover")
	for i := range 3 {
		v, err := redis.String(c.Do(ctx, "GET", key))
		require.NoError(t, err, "GET %d on the old cluster after its failover, while the client waits", i)
		assert.Equal(t, "v1", v, "GET %d", i)
	}
	_, err = c.Do(ctx, "SET", key, "v2")
	require.NoError(t, err, "SET on the old cluster after its failover")
	v, err = redis.String(plain.Do(ctx, "GET", key))
	require.NoError(t, err)
	assert.Equal(t, "v2", v, "the write is on the old cluster, where the other processes read")
	n, err := redis.Int(onNew.Do(ctx, "EXISTS", key))
	require.NoError(t, err)
	assert.Equal(t, 0, n, "the key was written on the new cluster while the client waits")
}
