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

// A node joins the old cluster of a client built with Config.Migration
// while it waits, and takes the slot of a subscribed shard channel and
// of a key. The client learns the node from the old cluster's answers:
// the channel and the key follow the slot there, the node is listed in
// Stats and health-checked (marked down when it stops answering).
func TestReview12OldClusterNodeThatJoinsIsKnown(t *testing.T) {
	ctx := oldClusterContext(t, 90*time.Second)
	old, c, onOld, _ := oldClusterWaiting(t, 5*time.Second)
	joiner := redistest.StartTB(t, redistest.Options{Cluster: true})
	tag := strconv.FormatUint(rand.Uint64(), 36)
	key, sch := "r12join:{"+tag+"}", "r12joins:{"+tag+"}"
	_, err := c.Do(ctx, "SET", key, "old")
	require.NoError(t, err)
	owner, _ := ownerAndOther(t, old, key)
	sub := subscribedOnOld(ctx, t, c, sch, owner)
	require.Empty(t, nodeStats(c, joiner.Addr), "the joiner is not known before it joins")

	// The key moves with the slot, once the joiner sees the cluster
	// whole (else it refuses the MIGRATE: CLUSTERDOWN).
	host, port, ok := strings.Cut(owner.Addr, ":")
	require.True(t, ok)
	_, err = joiner.Do("CLUSTER", "MEET", host, port)
	require.NoError(t, err)
	id := nodeID(t, joiner)
	all := append(old.Masters(), joiner)
	waitFor(t, 20*time.Second, "every node to know the joiner, and the joiner the cluster ok", func() bool {
		for _, m := range all {
			nodes, err := m.Do("CLUSTER", "NODES")
			if err != nil || strings.Count(nodes, "\n")+1 < len(all) || strings.Contains(nodes, "handshake") ||
				!strings.Contains(nodes, id) {
				return false
			}
		}
		v, err := joiner.Do("CLUSTER", "INFO")
		return err == nil && strings.Contains(v, "cluster_state:ok")
	})
	_, err = redistest.MoveSlot(ctx, cluster.Slot(key), owner, joiner, all, redistest.SlotMoveOptions{})
	require.NoError(t, err)
	got, err := redis.String(c.Do(ctx, "GET", key))
	require.NoError(t, err)
	assert.Equal(t, "old", got)
	waitFor(t, 10*time.Second, "the shard channel at the node that joined", func() bool {
		return numSub(t, joiner, "SHARDNUMSUB", sch) == 1
	})
	n, err := redis.Int(onOld.Do(ctx, "SPUBLISH", sch, "joined"))
	require.NoError(t, err)
	require.Equal(t, 1, n)
	m, err := nextMessage(sub, 10*time.Second)
	require.NoError(t, err)
	assert.Equal(t, "joined", string(m.Data))
	waitFor(t, 10*time.Second, "the node that joined listed up in Stats", func() bool { return listedUp(c, joiner.Addr) })

	require.NoError(t, joiner.Pause())
	t.Cleanup(func() { _ = joiner.Resume() })
	waitFor(t, 20*time.Second, "the node that joined marked down by the health checks", func() bool {
		for _, ns := range nodeStats(c, joiner.Addr) {
			if !ns.ReadOnly && ns.Down {
				return true
			}
		}
		return false
	})
}

// The master of a key and of a subscribed shard channel fails in the old
// cluster of clients built with Config.Migration while they wait; its
// replica takes over. The clients learn the new master from the old
// cluster's topology: a GET sent while the master is dead is served by
// the promoted replica within MaxRetryWait, and the channel follows it
// there (two clients, so that neither learns it from the other's read).
// The refreshes they asked for were of their own cluster: the GET ended
// with a *RetryError after MaxRetryWait, and the channel was dialled at
// the dead master for the rest of the wait.
func TestReview12OldClusterFailoverIsFollowed(t *testing.T) {
	ctx := oldClusterContext(t, 120*time.Second)
	old := redistest.StartClusterTB(t, 3, 1, redistest.Options{NodeTimeout: time.Second})
	maxWait := func(_, to *shard.Config) { to.Cluster.MaxRetryWait = 15 * time.Second }
	cmds, from := waitingOn(t, old, maxWait)
	subs, _ := waitingOn(t, old, maxWait)

	tag := strconv.FormatUint(rand.Uint64(), 36)
	key, sch := "r12fo:{"+tag+"}", "r12fos:{"+tag+"}"
	_, err := cmds.Do(ctx, "SET", key, "old")
	require.NoError(t, err)
	owner, err := old.MasterOfSlot(cluster.Slot(key))
	require.NoError(t, err)
	replica, err := old.ReplicaOf(owner)
	require.NoError(t, err)
	sub := subscribedOnOld(ctx, t, subs, sch, owner)
	waitFor(t, 10*time.Second, "the key on the replica", func() bool {
		v, err := replica.Do("DBSIZE")
		return err == nil && v != "0"
	})

	require.NoError(t, owner.Kill())
	type result struct {
		v   any
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := cmds.Do(ctx, "GET", key)
		done <- result{v, err}
	}()
	waitFor(t, 30*time.Second, "the replica promoted", func() bool {
		v, err := replica.Do("ROLE")
		return err == nil && strings.HasPrefix(v, "master")
	})
	var r result
	select {
	case r = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the GET did not end")
	}
	require.NoError(t, r.err, "GET across the old cluster's failover")
	got, err := redis.String(r.v, nil)
	require.NoError(t, err)
	assert.Equal(t, "old", got)

	waitFor(t, 20*time.Second, "the shard channel at the promoted replica", func() bool {
		return numSub(t, replica, "SHARDNUMSUB", sch) == 1
	})
	plain := newClient(t, from)
	n, err := redis.Int(plain.Do(ctx, "SPUBLISH", sch, "promoted"))
	require.NoError(t, err)
	require.Equal(t, 1, n)
	m, err := nextMessage(sub, 10*time.Second)
	require.NoError(t, err)
	assert.Equal(t, "promoted", string(m.Data))
}

// A node that joined the old cluster of a client built with
// Config.Migration while it waits, and that the client learned from a
// MOVED, leaves it again (its slot moved back, forgotten by the others,
// stopped). The read of the old cluster's topology that a command there
// asks for no longer lists it: the client no longer lists it in Stats
// either (without health checks, whose rounds also settle the nodes, it
// stayed listed for good).
func TestReview12OldClusterNodeThatLeavesRetires(t *testing.T) {
	ctx := oldClusterContext(t, 90*time.Second)
	old := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	c, _ := waitingOn(t, old, func(_, to *shard.Config) {
		to.Health.Interval = -1
		to.Cluster.MaxRetryWait = 5 * time.Second
	})
	joiner := redistest.StartTB(t, redistest.Options{Cluster: true,
		Args: []string{"--cluster-allow-replica-migration", "no"}}) // an empty master stays one
	key := "r12leave:{" + strconv.FormatUint(rand.Uint64(), 36) + "}" // never set: its slot moves without keys
	owner, err := old.MasterOfSlot(cluster.Slot(key))
	require.NoError(t, err)

	joinCluster(t, joiner, old.Masters(), owner, cluster.Slot(key))
	v, err := c.Do(ctx, "GET", key)
	require.NoError(t, err)
	require.Nil(t, v)
	require.NotEmpty(t, nodeStats(c, joiner.Addr), "the node that joined, learned from its MOVED")

	leaveCluster(t, joiner, append(old.Masters(), joiner), owner, cluster.Slot(key), false)
	forgetNode(t, nodeID(t, joiner), old.Masters())
	require.NoError(t, joiner.Stop())
	v, err = c.Do(ctx, "GET", key)
	require.NoError(t, err, "GET after the node left")
	require.Nil(t, v)
	waitFor(t, 5*time.Second, "the node that left gone from Stats", func() bool {
		return len(nodeStats(c, joiner.Addr)) == 0
	})
}
