package shard_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// TestReview15ScanHalfMovedWithoutClusterNodes: the client's user may not
// run CLUSTER NODES (an ACL). Once the first master's walk is over, a slot
// with keys starts moving to it from the master walked last (SETSLOT
// IMPORTING/MIGRATING, MIGRATE of its keys), and the move is not finished
// when the Scan ends (no SETSLOT NODE): the slot is still the last
// master's in every slot map, yet its keys sit on the first master, whose
// walk was over before they came. They were present for the whole Scan
// and must all be reported, the Scan ending without an error.
func TestReview15ScanHalfMovedWithoutClusterNodes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl := startNoClusterNodesScanCluster(ctx, t)
	c, ms, byAddr := cl.c, cl.ms, cl.byAddr
	tag := tagOn(t, c, "half", ms[2].Addr, nil)
	fill, moving, ownerOf := fillAndMoving(ctx, t, c, tag)
	src, dst := byAddr[ms[2].Addr], byAddr[ms[0].Addr]
	slot := itoa(cluster.Slot(tag))
	srcID, dstID := cl.ids[src.Addr], cl.ids[dst.Addr]
	host, port, _ := strings.Cut(dst.Addr, ":")

	seen := map[string]int{}
	sc := c.Scan(shard.ScanOptions{Count: 20})
	started := false
	for sc.Next(ctx) {
		k := sc.Key()
		seen[k]++
		if !started && ownerOf[k] == ms[1].Addr {
			started = true
			// As redis-cli --cluster reshard, stopped before SETSLOT NODE.
			_, err := dst.Do("CLUSTER", "SETSLOT", slot, "IMPORTING", srcID)
			require.NoError(t, err)
			_, err = src.Do("CLUSTER", "SETSLOT", slot, "MIGRATING", dstID)
			require.NoError(t, err)
			for {
				out, err := src.Do("CLUSTER", "GETKEYSINSLOT", slot, "10")
				require.NoError(t, err)
				keys := strings.Fields(out)
				if len(keys) == 0 {
					break
				}
				_, err = src.Do(append([]string{"MIGRATE", host, port, "", "0", "5000", "AUTH2", "admin", "admin-pass-0", "KEYS"}, keys...)...)
				require.NoError(t, err)
			}
		}
	}
	require.NoError(t, sc.Err())
	require.True(t, started)
	nodes, err := dst.Do("CLUSTER", "NODES")
	require.NoError(t, err)
	require.Contains(t, nodes, "["+slot+"-<-", "the slot is still being imported")
	out, err := src.Do("CLUSTER", "COUNTKEYSINSLOT", slot)
	require.NoError(t, err)
	require.Equal(t, "0", out, "the keys left the last master")
	requireEveryKey(t, append(fill, moving...), seen)
}
