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

// scanAll runs a whole Scan and returns how many times each key came.
func scanAll(ctx context.Context, t *testing.T, c *shard.Client, opts shard.ScanOptions) map[string]int {
	t.Helper()
	seen := map[string]int{}
	sc := c.Scan(opts)
	for sc.Next(ctx) {
		seen[sc.Key()]++
	}
	require.NoError(t, sc.Err())
	return seen
}

// TestReview14ClusterScanFilters: on one cluster of three masters, a Scan
// of the empty cluster ends at once with no key and no error; a Scan with
// a TYPE filter reports exactly the keys of that type, on every master;
// one whose MATCH pattern names a hash tag reports exactly that tag's
// keys (every master is walked: nothing promises fewer).
func TestReview14ClusterScanFilters(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	cfg := clusterConfig(rc.Seeds()...)
	c := newClient(t, cfg)

	require.Empty(t, scanAll(ctx, t, c, shard.ScanOptions{}), "an empty cluster")
	require.Empty(t, scanAll(ctx, t, c, shard.ScanOptions{Type: "hash", Match: "{x}*"}), "an empty cluster, filtered")

	strs := fillKeys(ctx, t, c, "str", 600)
	var hashes []string
	for i := range 300 {
		k := fmt.Sprintf("hash:%d", i)
		_, err := c.Do(ctx, "HSET", k, "f", i)
		require.NoError(t, err)
		hashes = append(hashes, k)
	}
	owners := map[string]bool{}
	for _, k := range hashes {
		n, err := c.Router().Route(k)
		require.NoError(t, err)
		owners[n.Addr] = true
	}
	require.Len(t, owners, 3, "hashes on every master")
	tagged := fillKeys(ctx, t, c, "{tg}", 50)

	seen := scanAll(ctx, t, c, shard.ScanOptions{Type: "hash", Count: 50})
	require.Len(t, seen, len(hashes))
	for _, k := range hashes {
		require.Equal(t, 1, seen[k], k)
	}
	seen = scanAll(ctx, t, c, shard.ScanOptions{Type: "string", Count: 50})
	require.Len(t, seen, len(strs)+len(tagged))
	seen = scanAll(ctx, t, c, shard.ScanOptions{Match: "{tg}*", Count: 50})
	require.Len(t, seen, len(tagged))
	for _, k := range tagged {
		require.Equal(t, 1, seen[k], k)
	}
	seen = scanAll(ctx, t, c, shard.ScanOptions{Match: "{tg}*", Type: "hash"})
	require.Empty(t, seen)
}

// TestReview14ClusterScanWithoutClusterNodes: the client's user may not
// run CLUSTER NODES (an ACL). A Scan must still report every key and end
// without an error, also when a slot with keys moves (SETSLOT NODE done)
// from the master walked last to the one walked first during it, and must
// not hang or wait on the refusals.
func TestReview14ClusterScanWithoutClusterNodes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl := startNoClusterNodesScanCluster(ctx, t)
	rc, c, ms, byAddr := cl.rc, cl.c, cl.ms, cl.byAddr
	tag := tagOn(t, c, "acl", ms[2].Addr, nil)
	fill, moving, _ := fillAndMoving(ctx, t, c, tag)
	want := append(fill, moving...)
	ownerOf := keyOwners(t, c, want)

	start := time.Now()
	seen := scanAll(ctx, t, c, shard.ScanOptions{Count: 20})
	requireEveryKey(t, want, seen)
	require.Less(t, time.Since(start), 20*time.Second)

	seen = map[string]int{}
	sc := c.Scan(shard.ScanOptions{Count: 20})
	moved := false
	for sc.Next(ctx) {
		k := sc.Key()
		seen[k]++
		if !moved && ownerOf[k] == ms[1].Addr {
			_, err := redistest.MoveSlot(ctx, cluster.Slot(tag), byAddr[ms[2].Addr], byAddr[ms[0].Addr], rc.Masters(), redistest.SlotMoveOptions{Batch: 10})
			require.NoError(t, err)
			moved = true
		}
	}
	require.NoError(t, sc.Err())
	require.True(t, moved)
	requireEveryKey(t, want, seen)
}
