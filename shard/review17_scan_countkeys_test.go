package shard_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// TestReview17ScanCostWithoutClusterNodes: the time of a Scan of 1,500
// keys over three loopback masters, by a user who may run everything and
// by one who may not run CLUSTER NODES (each master then tells the slots
// it holds by CLUSTER COUNTKEYSINSLOT as the Scan ends). Both report
// every key without an error; the times are logged.
func TestReview17ScanCostWithoutClusterNodes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own clusters")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	const runs = 5
	timeScans := func(cl scanCluster) time.Duration {
		want := fillKeys(ctx, t, cl.c, "cost", 1500)
		best := time.Duration(0)
		for range runs {
			seen := map[string]int{}
			began := time.Now()
			sc := cl.c.Scan(shard.ScanOptions{Count: 100})
			for sc.Next(ctx) {
				seen[sc.Key()]++
			}
			took := time.Since(began)
			require.NoError(t, sc.Err())
			requireEveryKey(t, want, seen)
			if best == 0 || took < best {
				best = took
			}
		}
		return best
	}
	all := timeScans(startScanCluster(t, 0, redistest.Options{}, func(cfg *shard.Config) { cfg.Cluster.RefreshInterval = -1 }))
	acl := timeScans(startNoClusterNodesScanCluster(ctx, t))
	t.Logf("best of %d Scans of 1500 keys over 3 masters: %v with CLUSTER NODES, %v without", runs, all, acl)
}
