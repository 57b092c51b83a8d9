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

	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// A node of the old cluster of a client built with Config.Migration
// leaves it while the client waits (the client retires it), then a node
// at the same address joins again and takes a slot. The client learns it
// from the MOVED of a command on that slot, and routes there; the node
// stayed retired, out of Stats and not health-checked, until something
// else settled the nodes (the next health round; without health checks,
// a read of the old topology that changed the node list).
func TestReview12OldClusterNodeBackByMovedIsListed(t *testing.T) {
	ctx := oldClusterContext(t, 120*time.Second)
	old := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	c, _ := waitingOn(t, old, func(_, to *shard.Config) {
		to.Health.Interval = -1
		to.Cluster.MaxRetryWait = 5 * time.Second
	})
	joiner := redistest.StartTB(t, redistest.Options{Cluster: true,
		Args: []string{"--cluster-allow-replica-migration", "no"}}) // an empty master stays one
	key := "r12back:{" + strconv.FormatUint(rand.Uint64(), 36) + "}" // never set: its slot moves without keys
	slot := cluster.Slot(key)
	owner, err := old.MasterOfSlot(slot)
	require.NoError(t, err)

	joinCluster(t, joiner, old.Masters(), owner, slot)
	v, err := c.Do(ctx, "GET", key)
	require.NoError(t, err)
	require.Nil(t, v)
	require.NotEmpty(t, nodeStats(c, joiner.Addr), "the node that joined, learned from its MOVED")

	leaveCluster(t, joiner, append(old.Masters(), joiner), owner, slot, false)
	forgetNode(t, nodeID(t, joiner), old.Masters())
	require.NoError(t, joiner.Kill()) // not Stop: it starts again below
	v, err = c.Do(ctx, "GET", key)
	require.NoError(t, err, "GET after the node left")
	require.Nil(t, v)
	waitFor(t, 5*time.Second, "the node that left gone from Stats", func() bool {
		return len(nodeStats(c, joiner.Addr)) == 0
	})

	// A new node at the same address joins and takes the slot again.
	require.NoError(t, joiner.Restart())
	_, err = joiner.Do("CLUSTER", "RESET", "HARD") // a new node ID: the others banned the old one
	require.NoError(t, err)
	joinCluster(t, joiner, old.Masters(), owner, slot)
	waitFor(t, 20*time.Second, "the node that joined again sees the cluster ok", func() bool {
		v, err := joiner.Do("CLUSTER", "INFO")
		return err == nil && strings.Contains(v, "cluster_state:ok")
	})
	_, err = joiner.Do("SET", key, "back")
	require.NoError(t, err)
	got, err := redis.String(c.Do(ctx, "GET", key))
	require.NoError(t, err, "GET at the node that joined again")
	assert.Equal(t, "back", got)
	assert.Equal(t, joiner.Addr, shard.Review12OldClusterRoute(c, key), "the old table names the node, from its MOVED")
	listed := false
	for end := time.Now().Add(2 * time.Second); !listed && time.Now().Before(end); {
		if listed = len(nodeStats(c, joiner.Addr)) > 0; !listed {
			time.Sleep(20 * time.Millisecond)
		}
	}
	assert.True(t, listed, "the node that joined again, which the old table names, is not in Stats")
}
