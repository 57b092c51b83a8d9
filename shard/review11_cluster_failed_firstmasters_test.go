package shard_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// TestReview11FailedNodeRetiresWhileTheFirstMastersAreDown: a failed
// replica that the cluster still lists is kept by the client, and
// retires once the cluster forgets it; a refresh learns that from the
// first three masters not marked down. The first three masters of the
// table were taken, marked down or not: with those three marked down,
// no master was asked although a fourth one answers, and the forgotten
// replica stayed, health-checked and reported down, until one of them
// came back.
func TestReview11FailedNodeRetiresWhileTheFirstMastersAreDown(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster and waits for a node to be flagged fail")
	}
	ctx := context.Background()
	rc := redistest.StartClusterTB(t, 4, 1, redistest.Options{NodeTimeout: failNodeTimeout})
	cfg := clusterConfig(rc.Seeds()...)
	cfg.Cluster.RefreshInterval = -1
	// The health checks of the masters named sick fail: they are marked
	// down while they serve (the cluster sees nothing wrong with them).
	var mu sync.Mutex
	sick := map[string]bool{}
	errSick := errors.New("sick")
	cfg.Health.Check = func(ctx context.Context, conn redis.Conn, n shard.Node) error {
		mu.Lock()
		s := sick[n.Addr]
		mu.Unlock()
		if s {
			return errSick
		}
		return shard.CheckPing(ctx, conn, n)
	}
	c := newClient(t, cfg)

	masters := rc.Masters()
	require.Len(t, masters, 4)
	reps := rc.Replicas()
	require.Len(t, reps, 4)
	victim := reps[0]
	id := killUntilFlagged(t, victim, masters)
	settleNodeTimeout(t, rc, victim)
	require.NoError(t, c.Refresh(ctx))
	require.NotEmpty(t, nodeStats(c, victim.Addr), "the failed replica, still listed by the cluster, is kept")

	first := c.Nodes() // the masters in table order
	require.Len(t, first, 4)
	mu.Lock()
	for _, n := range first[:3] {
		sick[n.Addr] = true
	}
	mu.Unlock()
	waitFor(t, 20*time.Second, "the first three masters marked down", func() bool {
		for _, n := range first[:3] {
			if ns := nodeStats(c, n.Addr); len(ns) == 0 || !ns[0].Down {
				return false
			}
		}
		return true
	})
	forgetNode(t, id, masters)
	require.NoError(t, c.Refresh(ctx))
	require.Empty(t, nodeStats(c, victim.Addr),
		"the cluster forgot the failed replica and %s, a master not marked down, says so", first[3].Addr)
}
