package shardisprom_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/extra/shardisprom"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview6DurationsKeepADemotedMaster: a manual failover (CLUSTER
// FAILOVER on the replica) takes a master out of the slot map's masters
// (shard.SlotMapEvent.Removed) but not out of the cluster: it stays as a
// replica, in Stats and health-checked. Its duration series must stay,
// as its shardis_node_up does; before, the SlotMap hook deleted them as
// if the node had left, so its counts fell back to zero at every
// failover. The series of a node that really leaves go with
// shard.NodeRetired.
func TestReview6DurationsKeepADemotedMaster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster and fails a master over")
	}
	rc := redistest.StartClusterTB(t, 3, 1, redistest.Options{NodeTimeout: time.Second})
	d := shardisprom.NewDurations(nil, nil)
	removed := make(chan string, 16)
	cfg := shard.Config{
		Mode:  shard.ModeCluster,
		Seeds: rc.Seeds(),
		Pool:  pool.Options{DialTimeout: time.Second, ReadTimeout: time.Second},
		Hooks: shard.JoinHooks(d.Hooks(), &shard.Hooks{SlotMap: func(ev shard.SlotMapEvent) {
			for _, n := range ev.Removed {
				select {
				case removed <- n.Addr:
				default:
				}
			}
		}}),
	}
	cfg.Health.Interval = -1
	ctx := context.Background()
	c, err := shard.New(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })

	const key = "{r6demote}k"
	node, err := c.Router().Route(key)
	require.NoError(t, err)
	var old *redistest.Server
	for _, m := range rc.Masters() {
		if m.Addr == node.Addr {
			old = m
		}
	}
	require.NotNil(t, old, "no master at %s", node.Addr)
	replica, err := rc.ReplicaOf(old)
	require.NoError(t, err)
	_, err = c.Do(ctx, "SET", key, "v")
	require.NoError(t, err)
	require.True(t, hasSeries(d, old.Addr), "no series for %s after a SET there", old.Addr)

	_, err = replica.Do("CLUSTER", "FAILOVER")
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		r, err := old.Do("ROLE")
		return err == nil && strings.HasPrefix(r, "slave")
	}, 30*time.Second, 20*time.Millisecond, "%s was not demoted", old.Addr)

	// The SET meets the demoted master's MOVED: the client installs the
	// map with the replica as master, and the retried SET lands there.
	require.Eventually(t, func() bool {
		_, err := c.Do(ctx, "SET", key, "w")
		return err == nil
	}, 30*time.Second, 20*time.Millisecond)
	select {
	case addr := <-removed:
		require.Equal(t, old.Addr, addr, "the master removed from the map")
	case <-time.After(30 * time.Second):
		t.Fatal("no SlotMap event removed the demoted master")
	}
	st := c.Stats()
	listed := false
	for _, n := range st.Nodes {
		listed = listed || n.Node.Addr == old.Addr
	}
	require.True(t, listed, "the demoted master is still a node of the cluster in Stats")
	assert.True(t, hasSeries(d, old.Addr), "the duration series of %s, a replica now, were deleted", old.Addr)
}
