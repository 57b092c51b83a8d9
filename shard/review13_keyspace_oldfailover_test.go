package shard_test

import (
	"context"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// A keyspace subscription of a cluster client built with Config.Migration
// listens to the old cluster's masters too while the migration runs: the
// keys not moved yet emit their events there. When the old cluster fails
// a master over by hand (CLUSTER FAILOVER), the old master lives on as a
// replica, and a command of the client meets its MOVED, which corrects
// the old cluster's table. The subscription watched the table of the
// client's own cluster alone: it stayed on the demoted master (which
// emits no expiry), and the promoted one's expired events were lost for
// the rest of the migration.
func TestReview13KeyspaceFollowsAnOldClusterMoved(t *testing.T) {
	keyspaceOldManualFailover(t, true)
}

// The same without any command of the client: nothing but a periodic
// read of the old cluster's topology tells the subscription, whose
// connections all stay healthy, that a master there was demoted.
func TestReview13KeyspaceFollowsAnOldClusterManualFailover(t *testing.T) {
	keyspaceOldManualFailover(t, false)
}

func keyspaceOldManualFailover(t *testing.T, command bool) {
	if testing.Short() {
		t.Skip("starts a cluster of its own")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	oldCluster := redistest.StartClusterTB(t, 3, 1, redistest.Options{})
	c, from := waitingOn(t, oldCluster, func(_, to *shard.Config) { to.Cluster.RefreshInterval = time.Second })
	plain := newClient(t, from) // a process still on the old cluster

	key := "r13ksmoved:{" + strconv.FormatUint(rand.Uint64(), 36) + "}"
	sub, err := c.SubscribeKeyspace(ctx, shard.KeyspaceOptions{Enable: "Ex", Patterns: []string{"__keyevent@0__:expired"}})
	require.NoError(t, err)
	defer sub.Close()

	// expiredWithin writes the key on the old cluster, to expire at
	// once, until its expired event arrives, or d passes.
	expiredWithin := func(d time.Duration) bool {
		deadline := time.Now().Add(d)
		for time.Now().Before(deadline) {
			_, _ = plain.Do(ctx, "SET", key, "v", "PX", "20")
			rctx, rcancel := context.WithTimeout(ctx, 300*time.Millisecond)
			for {
				v, err := sub.Receive(rctx)
				if err != nil {
					break
				}
				if m, ok := v.(redis.Message); ok && string(m.Data) == key {
					rcancel()
					return true
				}
			}
			rcancel()
		}
		return false
	}
	require.True(t, expiredWithin(10*time.Second), "the key's expiry on the old cluster before the failover")

	owner, err := oldCluster.MasterOfSlot(cluster.Slot(key))
	require.NoError(t, err)
	replica, err := oldCluster.ReplicaOf(owner)
	require.NoError(t, err)
	_, err = replica.Do("CLUSTER", "FAILOVER")
	require.NoError(t, err)
	deadline := time.Now().Add(30 * time.Second)
	for {
		role, err := replica.Do("ROLE")
		if err == nil && strings.HasPrefix(role, "master") {
			if _, err := plain.Do(ctx, "SET", key, "v"); err == nil {
				break // the old cluster serves the key at its new master
			}
		}
		require.True(t, time.Now().Before(deadline), "the replica %s did not take over in 30 s (ROLE %q)", replica.Addr, role)
		time.Sleep(50 * time.Millisecond)
	}
	if command {
		// The client, waiting, routes by the old cluster: the demoted
		// master answers MOVED.
		_, err = c.Do(ctx, "SET", key, "w")
		require.NoError(t, err)
		require.Equal(t, replica.Addr, shard.Review12OldClusterRoute(c, key), "the old cluster's table follows the MOVED")
	}

	require.True(t, expiredWithin(10*time.Second), "no expired event from the old cluster's promoted replica")
}
