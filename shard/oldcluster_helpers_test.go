package shard_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// This file sets up the tests of a cluster client built with
// Config.Migration while it waits: its commands and subscriptions go to
// the old cluster, a cluster of the test's own.

// oldClusterContext skips the test under -short (it starts a cluster of
// its own) and returns a context that ends after timeout, or when the
// test ends.
func oldClusterContext(t *testing.T, timeout time.Duration) context.Context {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a cluster of its own")
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	return ctx
}

// subscribedOnOld subscribes c, waiting, to the shard channel sch and
// waits until owner, the channel's master on the old cluster, counts the
// subscription. The subscription is closed when the test ends.
func subscribedOnOld(ctx context.Context, t *testing.T, c *shard.Client, sch string, owner *redistest.Server) *shard.Subscription {
	t.Helper()
	sub, err := c.SSubscribe(ctx, sch)
	require.NoError(t, err)
	t.Cleanup(func() { sub.Close() })
	waitFor(t, 10*time.Second, "the shard channel at its owner on the old cluster", func() bool {
		return numSub(t, owner, "SHARDNUMSUB", sch) == 1
	})
	return sub
}

// oldClusterWaiting starts a cluster of three masters and a client built
// with Config.Migration from it to the shared cluster, waiting (its
// commands and subscriptions go to the old cluster), with maxWait as its
// MaxRetryWait; it returns the old cluster, the client, and clients of
// the old and the new cluster alone.
func oldClusterWaiting(t *testing.T, maxWait time.Duration) (old *redistest.Cluster, c, onOld, onNew *shard.Client) {
	t.Helper()
	old = redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	c, from := waitingOn(t, old, func(_, to *shard.Config) { to.Cluster.MaxRetryWait = maxWait })
	return old, c, newClient(t, from), newClient(t, clusterConfig(clusterForTest(t).Seeds()...))
}

// waitingOn returns a client built with Config.Migration from the cluster
// old to the shared cluster, checked to be waiting (its commands and
// subscriptions go to old), and the config of old it was given. tweak,
// when not nil, adjusts both configs first.
func waitingOn(t *testing.T, old *redistest.Cluster, tweak func(from, to *shard.Config)) (c *shard.Client, from shard.Config) {
	t.Helper()
	from = clusterConfig(old.Seeds()...)
	to := clusterConfig(clusterForTest(t).Seeds()...)
	if tweak != nil {
		tweak(&from, &to)
	}
	f := from
	to.Migration = &shard.Migration{From: &f}
	c = newClient(t, to)
	info, ok := c.Migration()
	require.True(t, ok)
	require.Equal(t, shard.PhaseWaiting, info.Phase)
	return c, from
}

// ownerAndOther returns the master of old that serves key, and another.
func ownerAndOther(t *testing.T, old *redistest.Cluster, key string) (owner, other *redistest.Server) {
	t.Helper()
	owner, err := old.MasterOfSlot(cluster.Slot(key))
	require.NoError(t, err)
	other, err = old.OtherMaster(owner)
	require.NoError(t, err)
	return owner, other
}

// masterAddrs returns the addresses of old's masters, as a set.
func masterAddrs(old *redistest.Cluster) map[string]bool {
	addrs := map[string]bool{}
	for _, s := range old.Masters() {
		addrs[s.Addr] = true
	}
	return addrs
}

// ownRouter returns the cluster router of c's own (new) cluster.
func ownRouter(t *testing.T, c *shard.Client) *shard.ClusterRouter {
	t.Helper()
	own, ok := c.Router().(*shard.ClusterRouter)
	require.True(t, ok, "%T", c.Router())
	return own
}

// routedOwner returns the master of old that plain (a client of old
// alone) routes key to, and another master of old.
func routedOwner(t *testing.T, old *redistest.Cluster, plain *shard.Client, key string) (owner, other *redistest.Server) {
	t.Helper()
	ownerAddr, err := plain.Router().Route(key)
	require.NoError(t, err)
	for _, s := range old.Masters() {
		if s.Addr == ownerAddr.Addr {
			owner = s
		} else if other == nil {
			other = s
		}
	}
	require.NotNil(t, owner, "the old owner of %q", key)
	require.NotNil(t, other)
	return owner, other
}

// replicatedOnOld writes key = "v1" through c, waiting on old, and
// returns the master of old that plain routes key to and its replica,
// once the replica has the key.
func replicatedOnOld(ctx context.Context, t *testing.T, old *redistest.Cluster, c, plain *shard.Client, key string) (owner, replica *redistest.Server) {
	t.Helper()
	_, err := c.Do(ctx, "SET", key, "v1")
	require.NoError(t, err)
	owner, _ = routedOwner(t, old, plain, key)
	replica, err = old.ReplicaOf(owner)
	require.NoError(t, err)
	acked, err := owner.Do("WAIT", "1", "5000")
	require.NoError(t, err)
	require.Equal(t, "1", acked, "the replica has the key")
	return owner, replica
}

// sharedClusterClient opens a client of the shared cluster alone (the one
// the waiting clients migrate to), which deletes key there when the test
// ends, had it landed there.
func sharedClusterClient(t *testing.T, key string) *shard.Client {
	t.Helper()
	onNew := newClient(t, clusterConfig(clusterForTest(t).Seeds()...))
	t.Cleanup(func() { _, _ = onNew.Do(context.Background(), "DEL", key) })
	return onNew
}
