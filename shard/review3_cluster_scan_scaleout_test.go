package shard_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// TestScanClusterFindsMasterAddedByScaleOut scales a cluster out behind
// the client's back: a fourth master joins and a slot with keys moves to
// it (what redis-cli --cluster reshard does), and the client meets no
// MOVED and has no periodic refresh. A Scan must still report every key:
// walking only the masters of the client's stale map silently left out
// the keys on the new master.
func TestScanClusterFindsMasterAddedByScaleOut(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster and a fourth master")
	}
	ctx := context.Background()
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	masters := rc.Masters()
	require.Len(t, masters, 3)
	cfg := clusterConfig(rc.Seeds()...)
	cfg.Cluster.RefreshInterval = -1
	c := newClient(t, cfg)

	const n = 50
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("{scaleout}:%d", i)
		_, err := c.Do(ctx, "SET", keys[i], i)
		require.NoError(t, err)
	}
	slot := cluster.Slot(keys[0])
	src, err := rc.MasterOfSlot(slot)
	require.NoError(t, err)

	// A fourth master joins and the slot, keys and all, moves to it.
	nw := redistest.StartTB(t, redistest.Options{Cluster: true})
	host, port, ok := strings.Cut(masters[0].Addr, ":")
	require.True(t, ok)
	_, err = nw.Do("CLUSTER", "MEET", host, port)
	require.NoError(t, err)
	nwID := nodeID(t, nw)
	all := append([]*redistest.Server{nw}, masters...)
	waitFor(t, 30*time.Second, "every node to know the new master", func() bool {
		for _, m := range all {
			nodes, err := m.Do("CLUSTER", "NODES")
			if err != nil || strings.Count(strings.TrimSpace(nodes), "\n")+1 < len(all) ||
				strings.Contains(nodes, "handshake") || !strings.Contains(nodes, nwID) {
				return false
			}
		}
		return true
	})
	waitFor(t, 30*time.Second, "the new master to see the cluster up", func() bool {
		info, err := nw.Do("CLUSTER", "INFO")
		return err == nil && strings.Contains(info, "cluster_state:ok")
	})
	s := strconv.Itoa(slot)
	_, err = nw.Do("CLUSTER", "SETSLOT", s, "IMPORTING", nodeID(t, src))
	require.NoError(t, err)
	_, err = src.Do("CLUSTER", "SETSLOT", s, "MIGRATING", nwID)
	require.NoError(t, err)
	nhost, nport, ok := strings.Cut(nw.Addr, ":")
	require.True(t, ok)
	_, err = src.Do(append([]string{"MIGRATE", nhost, nport, "", "0", "5000", "KEYS"}, keys...)...)
	require.NoError(t, err)
	for _, m := range all {
		_, err = m.Do("CLUSTER", "SETSLOT", s, "NODE", nwID)
		require.NoError(t, err)
	}
	moved, err := nw.Do("CLUSTER", "COUNTKEYSINSLOT", s)
	require.NoError(t, err)
	require.Equal(t, strconv.Itoa(n), moved, "the keys sit on the new master")

	for _, m := range c.Nodes() {
		require.NotEqual(t, nw.Addr, m.Addr, "the client's map does not know the new master yet")
	}
	seen := map[string]int{}
	sc := c.Scan(shard.ScanOptions{Match: "{scaleout}:*", Count: 10})
	for sc.Next(ctx) {
		seen[sc.Key()]++
	}
	require.NoError(t, sc.Err())
	require.Len(t, seen, n, "every key, also those on the new master")
	for _, k := range keys {
		require.Equal(t, 1, seen[k], k)
	}
}
