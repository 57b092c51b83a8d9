package shard_test

import (
	"context"
	"sync"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// TestReview5ClusterForEachNodeDuringAMigration pins what docs/resharding.md
// says ForEachNode visits while a ring moves into a cluster with replicas:
// the ring's shards and the cluster's masters, not its replicas (which
// serve no reads before the migration ends); once it ends, the replicas
// too.
func TestReview5ClusterForEachNodeDuringAMigration(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster with replicas")
	}
	ctx := context.Background()
	c, servers := startRing(t, 2)
	rc := redistest.StartClusterTB(t, 3, 1, redistest.Options{})
	to := clusterConfig(rc.Seeds()...)
	to.Pool = ringConfig(servers).Pool
	require.NoError(t, c.StartMigration(ctx, to))
	visit := func() []string {
		t.Helper()
		var (
			mu   sync.Mutex
			seen []string
		)
		require.NoError(t, c.ForEachNode(ctx, func(_ context.Context, n shard.Node, _ redis.Conn) error {
			mu.Lock()
			seen = append(seen, n.Addr)
			mu.Unlock()
			return nil
		}))
		return seen
	}
	masters, replicas := rc.Masters(), rc.Replicas()
	require.Len(t, masters, 3)
	require.Len(t, replicas, 3)
	var want []string
	for _, s := range servers {
		want = append(want, s.Addr)
	}
	for _, m := range masters {
		want = append(want, m.Addr)
	}
	require.ElementsMatch(t, want, visit(), "during the migration: the ring's shards and the cluster's masters")

	require.NoError(t, c.ArmMigration())
	require.NoError(t, c.FinishMigration())
	want = want[:0]
	for _, s := range append(masters, replicas...) {
		want = append(want, s.Addr)
	}
	require.ElementsMatch(t, want, visit(), "after it: the cluster's masters and replicas")
}
