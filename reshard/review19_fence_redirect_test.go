package reshard_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/shard"
)

// markerReplica starts a cluster of 3 masters with a replica each (the
// old topology) and a plain server (the new one), and returns the replica
// of the master of the fence marker's slot: failed over to
// (failoverMarker), it serves the marker, while the nodes the mover
// listed redirect there.
func markerReplica(t *testing.T) (c *redistest.Cluster, from, to shard.Config, key string, replica *redistest.Server) {
	t.Helper()
	c = redistest.StartClusterTB(t, 3, 1, redistest.Options{})
	servers := redistest.StartNTB(t, 1, redistest.Options{})
	from = mustParse(t, clusterURL(c))
	to = mustParse(t, ringURL(servers, []string{"s0"}, nil))
	key = shard.FenceKey(shard.TopologyID(from), shard.TopologyID(to))
	m, err := c.MasterOfSlot(cluster.Slot(key))
	require.NoError(t, err)
	replica, err = c.ReplicaOf(m)
	require.NoError(t, err)
	return c, from, to, key, replica
}

// TestReview19ArmNamesTheNodeThatRefusedTheMarker: the marker's master
// failed over after the mover listed the old cluster's masters; every
// listed node redirects the marker's SET to the promoted replica, which
// is over its maxmemory and answers OOM. The error named a listed node,
// which the operator would have given room for nothing; it names the
// node that refused.
func TestReview19ArmNamesTheNodeThatRefusedTheMarker(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, from, to, key, replica := markerReplica(t)
	_, err := replica.Do("CONFIG", "SET", "maxmemory-policy", "noeviction")
	require.NoError(t, err)
	_, err = replica.Do("CONFIG", "SET", "maxmemory", "1")
	require.NoError(t, err)
	var (
		hookErr  error
		promoted *redistest.Server
	)
	reshard.SetTestHookBeforeFenceSet(failoverMarker(c, key, &hookErr, &promoted))
	defer reshard.SetTestHookBeforeFenceSet(nil)
	err = reshard.Arm(ctx, from, to, reshard.ArmOptions{SkipClientCheck: true, SkipProbe: true})
	reshard.SetTestHookBeforeFenceSet(nil)
	require.NoError(t, hookErr)
	require.Equal(t, replica, promoted)
	require.Error(t, err)
	assert.ErrorIs(t, err, reshard.ErrOldNodeFull)
	var ne *shard.NodeError
	require.True(t, errors.As(err, &ne), "%v", err)
	assert.Equal(t, replica.Addr, ne.Node.Addr, "the node that answered OOM: %v", err)
}

// TestReview19FinishNamesTheNodeThatRefusedTheMarker: as above for the
// marker's DEL, refused by the promoted replica's ACL.
func TestReview19FinishNamesTheNodeThatRefusedTheMarker(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, from, to, key, replica := markerReplica(t)
	m, err := c.MasterOfSlot(cluster.Slot(key))
	require.NoError(t, err)
	_, err = m.Do("SET", key, shard.FenceValue(shard.PhaseArmed, time.Now()))
	require.NoError(t, err)
	_, err = replica.Do("ACL", "SETUSER", "default", "-del")
	require.NoError(t, err)
	var (
		hookErr  error
		promoted *redistest.Server
	)
	reshard.SetTestHookBeforeFenceDelete(failoverMarker(c, key, &hookErr, &promoted))
	defer reshard.SetTestHookBeforeFenceDelete(nil)
	_, err = reshard.Finish(ctx, from, to)
	reshard.SetTestHookBeforeFenceDelete(nil)
	require.NoError(t, hookErr)
	require.Equal(t, replica, promoted)
	require.Error(t, err)
	var ne *shard.NodeError
	require.True(t, errors.As(err, &ne), "%v", err)
	assert.Equal(t, replica.Addr, ne.Node.Addr, "the node that refused the DEL: %v", err)
}
