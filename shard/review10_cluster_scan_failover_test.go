package shard_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// A master the Scan had walked already failed over (CLUSTER FAILOVER on
// its replica) before the Scan ended. The refresh at the end found the
// promoted replica, a master the Scan had not planned, and walked it as
// one added by a scale-out: every key of that shard was reported twice.
// The replica that took over a master walked already holds the keys
// reported already; it is not walked again.
func TestReview10ScanAfterAWalkedMasterFailedOverReportsEachKeyOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster")
	}
	ctx := context.Background()
	rc := redistest.StartClusterTB(t, 3, 1, redistest.Options{})
	c := newClient(t, clusterConfig(rc.Seeds()...))
	const n = 300
	for i := range n {
		_, err := c.Do(ctx, "SET", fmt.Sprintf("review10scanfo:%d", i), i)
		require.NoError(t, err)
	}
	masters := rc.Masters()
	require.Len(t, masters, 3)
	first := masters[0]
	rep, err := rc.ReplicaOf(first)
	require.NoError(t, err)
	_, err = first.Do("WAIT", "1", "5000")
	require.NoError(t, err)
	owner := func(key string) string {
		m, err := rc.MasterOfSlot(cluster.Slot(key))
		require.NoError(t, err)
		return m.Addr
	}
	nodes := c.Nodes()
	require.NotEmpty(t, nodes)
	require.Equal(t, first.Addr, nodes[0].Addr, "the Scan walks the first master first")

	seen := map[string]int{}
	sc := c.Scan(shard.ScanOptions{Match: "review10scanfo:*", Count: 20})
	// Walk until the first key of another master: the first master's
	// walk is over.
	for {
		require.True(t, sc.Next(ctx), "the Scan ends before the other masters: %v", sc.Err())
		seen[sc.Key()]++
		if owner(sc.Key()) != first.Addr {
			break
		}
	}
	_, err = rep.Do("CLUSTER", "FAILOVER")
	require.NoError(t, err)
	waitFor(t, 30*time.Second, "every node to know the new roles", func() bool {
		return everyNodeSees(rc, rep.Addr, "master") && everyNodeSees(rc, first.Addr, "slave")
	})
	for sc.Next(ctx) {
		seen[sc.Key()]++
	}
	require.NoError(t, sc.Err())
	require.Len(t, seen, n)
	var twice []string
	for k, times := range seen {
		if times != 1 {
			twice = append(twice, k)
		}
	}
	require.Empty(t, twice, "%d keys reported more than once", len(twice))
}
