package shard_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/stretchr/testify/require"
)

// A cluster that serves with a slot left without owner
// (cluster-require-full-coverage no, the slot removed with CLUSTER
// DELSLOTS on every node) answers every topology query with an incomplete
// map. The client must still follow a failover of another shard: it used
// to refuse every such answer and keep sending the dead master's slots
// to the dead master for good, since no MOVED can come from a node that
// is gone. The slot without owner keeps failing with the server's own
// answer (CLUSTERDOWN), not with a wrong one.
func TestReview21UncoveredSlotStillFollowsFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster")
	}
	rc := redistest.StartClusterTB(t, 3, 1, redistest.Options{
		NodeTimeout: time.Second,
		Args:        []string{"--cluster-require-full-coverage", "no"},
	})
	ms := rc.Masters()
	require.Len(t, ms, 3)
	a, holder := ms[0], ms[2]
	keyA, _ := keyOnMaster(t, rc, a, "r21uncov-a")
	keyX, slotX := keyOnMaster(t, rc, holder, "r21uncov-x")
	replica, err := rc.ReplicaOf(a)
	require.NoError(t, err)

	cfg := clusterConfig(rc.Seeds()...)
	cfg.Cluster.RefreshInterval = 200 * time.Millisecond
	c := newClient(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, err = c.Do(ctx, "SET", keyA, "before")
	require.NoError(t, err)

	for _, n := range rc.Nodes {
		_, err := n.Do("CLUSTER", "DELSLOTS", strconv.Itoa(slotX))
		require.NoError(t, err, "DELSLOTS on %s", n.Addr)
	}
	require.NoError(t, a.Kill())
	waitFor(t, 45*time.Second, "the replica of the killed master to take over", func() bool {
		role, err := replica.Do("ROLE")
		return err == nil && strings.HasPrefix(role, "master")
	})

	var last error
	waitFor(t, 45*time.Second, "a write to the failed-over shard to succeed", func() bool {
		cctx, ccancel := context.WithTimeout(ctx, 5*time.Second)
		defer ccancel()
		_, last = c.Do(cctx, "SET", keyA, "after")
		if last != nil {
			t.Logf("SET %s: %v", keyA, last)
		}
		return last == nil
	})
	v, err := replica.Do("GET", keyA)
	require.NoError(t, err)
	require.Equal(t, "after", v, "the write reached the new master")

	_, err = c.Do(ctx, "GET", keyX)
	require.Error(t, err, "a slot without owner cannot be served")
	require.Contains(t, err.Error(), "CLUSTERDOWN", "the server's own answer for a slot without owner")
}
