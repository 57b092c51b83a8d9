package reshard_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/shard"
)

// failoverMarker returns a hook that fails the master holding the
// marker's slot over to its replica, and waits until the old master is a
// replica answering MOVED for the marker: every node of the old
// topology's list (its masters when the mover looked) then redirects.
// Its error is kept in *hookErr (the hook runs inside the call under
// test), and the new master in *promoted.
func failoverMarker(c *redistest.Cluster, key string, hookErr *error, promoted **redistest.Server) func() {
	return func() {
		*hookErr = func() error {
			m, err := c.MasterOfSlot(cluster.Slot(key))
			if err != nil {
				return err
			}
			r, err := c.ReplicaOf(m)
			if err != nil {
				return err
			}
			*promoted = r
			if _, err := r.Do("CLUSTER", "FAILOVER"); err != nil {
				return err
			}
			deadline := time.Now().Add(30 * time.Second)
			for time.Now().Before(deadline) {
				role, rerr := m.Do("ROLE")
				_, gerr := m.Do("GET", key)
				if rerr == nil && strings.HasPrefix(role, "slave") && gerr != nil && strings.Contains(gerr.Error(), "MOVED") {
					return nil
				}
				time.Sleep(20 * time.Millisecond)
			}
			return fmt.Errorf("%s was not demoted", m.Addr)
		}()
	}
}

// fenceMarkerCluster starts a cluster of 3 masters with a replica each
// (the old topology) and a plain server (the new one), and sets the armed
// marker of the migration on the master of its slot.
func fenceMarkerCluster(t *testing.T) (c *redistest.Cluster, from, to shard.Config, key string) {
	t.Helper()
	c = redistest.StartClusterTB(t, 3, 1, redistest.Options{})
	servers := redistest.StartNTB(t, 1, redistest.Options{})
	from = mustParse(t, clusterURL(c))
	to = mustParse(t, ringURL(servers, []string{"s0"}, nil))
	key = shard.FenceKey(shard.TopologyID(from), shard.TopologyID(to))
	m, err := c.MasterOfSlot(cluster.Slot(key))
	require.NoError(t, err)
	_, err = m.Do("SET", key, shard.FenceValue(shard.PhaseArmed, time.Now()))
	require.NoError(t, err)
	return c, from, to, key
}

// markerOn returns the marker's value on m ("" for none).
func markerOn(t *testing.T, m *redistest.Server, key string) string {
	t.Helper()
	require.NotNil(t, m)
	v, err := m.Do("GET", key)
	require.NoError(t, err)
	return v
}

// TestReview18FinishFollowsTheMarkerAfterAFailover: the old topology is a
// cluster, and its marker's master failed over after Finish listed the
// masters. Every listed node answered MOVED to DEL, which Finish took for
// "the marker lives on another node" and reported success: the marker
// stayed on the new master while the CLI said the fence was cleared.
func TestReview18FinishFollowsTheMarkerAfterAFailover(t *testing.T) {
	ctx := context.Background()
	c, from, to, key := fenceMarkerCluster(t)
	var (
		hookErr  error
		promoted *redistest.Server
	)
	reshard.SetTestHookBeforeFenceDelete(failoverMarker(c, key, &hookErr, &promoted))
	defer reshard.SetTestHookBeforeFenceDelete(nil)
	_, err := reshard.Finish(ctx, from, to)
	reshard.SetTestHookBeforeFenceDelete(nil)
	require.NoError(t, hookErr)
	if err == nil {
		assert.Empty(t, markerOn(t, promoted, key), "Finish reported success, but the marker is still up")
		return
	}
	// Failing is fine too, as long as it says so.
	assert.ErrorIs(t, err, shard.ErrMigration)
	assert.NotEmpty(t, markerOn(t, promoted, key))
}

// TestReview18ClearFenceFollowsTheMarkerAfterAFailover: ClearFence, like
// Finish, reported a clear that did not happen when every node it listed
// answered MOVED.
func TestReview18ClearFenceFollowsTheMarkerAfterAFailover(t *testing.T) {
	ctx := context.Background()
	c, from, to, key := fenceMarkerCluster(t)
	var (
		hookErr  error
		promoted *redistest.Server
	)
	reshard.SetTestHookBeforeFenceDelete(failoverMarker(c, key, &hookErr, &promoted))
	defer reshard.SetTestHookBeforeFenceDelete(nil)
	err := reshard.ClearFence(ctx, from, to)
	reshard.SetTestHookBeforeFenceDelete(nil)
	require.NoError(t, hookErr)
	if err == nil {
		assert.Empty(t, markerOn(t, promoted, key), "ClearFence reported success, but the marker is still up")
		return
	}
	assert.True(t, errors.Is(err, shard.ErrMigration), "%v", err)
	assert.NotEmpty(t, markerOn(t, promoted, key))
}
