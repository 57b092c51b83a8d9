package shard_test

import (
	"context"
	"testing"
	"time"

	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A seed that is a cluster node not yet met (just started, owning no
// slot) answers with a map of itself alone: it is skipped for the next
// seed, and never becomes the table, neither at New nor at a refresh,
// even when it is the only node that answers; alone, it gives
// cluster.ErrIncomplete.
func TestReview21UnmetNodeSeedIsNotTaken(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster")
	}
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	fresh := redistest.StartTB(t, redistest.Options{Cluster: true})
	ctx := context.Background()

	cfg := clusterConfig(fresh.Addr, rc.Seeds()[0])
	cfg.Cluster.RefreshInterval = -1
	c := newClient(t, cfg)
	masters := c.Router().(*shard.ClusterRouter).Table().Masters()
	require.Len(t, masters, 3)
	for _, m := range masters {
		assert.NotEqual(t, fresh.Addr, m.Addr)
	}
	for i := 0; i < 3; i++ {
		require.NoError(t, c.Refresh(ctx))
	}
	for _, n := range c.Router().(*shard.ClusterRouter).AllNodes() {
		assert.NotEqual(t, fresh.Addr, n.Addr, "the unmet node joined the table")
	}
	_, err := c.Do(ctx, "SET", "r21fresh:k", "v")
	require.NoError(t, err)

	// With every node of the cluster hung, the unmet seed is the only
	// one that answers: its map of itself is still not taken (filled
	// from the table in use, it would send every slot to it).
	for _, m := range rc.Nodes {
		pauseUntilCleanup(t, m)
	}
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err = c.Refresh(rctx)
	require.Error(t, err, "no node of the cluster answers")
	t.Logf("%v", err)
	assert.ErrorIs(t, err, cluster.ErrIncomplete, "the unmet seed's answer")
	for _, n := range c.Router().(*shard.ClusterRouter).AllNodes() {
		assert.NotEqual(t, fresh.Addr, n.Addr, "the unmet node joined the table")
	}
	for _, m := range rc.Nodes {
		require.NoError(t, m.Resume())
	}

	_, err = shard.New(ctx, clusterConfig(fresh.Addr))
	require.Error(t, err)
	assert.ErrorIs(t, err, cluster.ErrIncomplete)
}
