package shard_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// TestScanClusterContinuesOnThePromotedReplica: a master the Scan is to
// walk dies and its replica takes over within MaxRetryWait. The Scan
// walks the promoted replica (from cursor 0: a cursor means nothing to
// another server) and reports every key once. It kept sending SCAN to
// the dead master until MaxRetryWait and failed, though the cluster had
// recovered.
func TestScanClusterContinuesOnThePromotedReplica(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster and waits for a failover")
	}
	ctx := context.Background()
	rc := redistest.StartClusterTB(t, 3, 1, redistest.Options{NodeTimeout: time.Second})
	cfg := clusterConfig(rc.Seeds()...)
	cfg.Cluster.MaxRetryWait = 30 * time.Second
	c := newClient(t, cfg)
	const n = 300
	for i := range n {
		_, err := c.Do(ctx, "SET", fmt.Sprintf("scanfo:%d", i), i)
		require.NoError(t, err)
	}
	masters := rc.Masters()
	require.Len(t, masters, 3)
	for _, m := range masters {
		acked, err := m.Do("WAIT", "1", "5000")
		require.NoError(t, err)
		require.Equal(t, "1", acked, "the replica of %s has every key", m.Addr)
	}
	victim := masters[len(masters)-1]
	planned := false
	for _, m := range c.Nodes() {
		planned = planned || m.Addr == victim.Addr
	}
	require.True(t, planned, "the Scan plans the master that dies")
	require.NoError(t, victim.Kill())

	seen := map[string]int{}
	sc := c.Scan(shard.ScanOptions{Match: "scanfo:*", Count: 20})
	for sc.Next(ctx) {
		seen[sc.Key()]++
	}
	require.NoError(t, sc.Err())
	require.Len(t, seen, n)
	for i := range n {
		k := fmt.Sprintf("scanfo:%d", i)
		require.Equal(t, 1, seen[k], k)
	}
}
