package shard_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/stretchr/testify/require"
)

// topologyCalls sums, over servers, the CLUSTER SHARDS and CLUSTER SLOTS
// commands each has run (INFO commandstats).
func topologyCalls(t *testing.T, servers []*redistest.Server) int64 {
	t.Helper()
	var n int64
	for _, s := range servers {
		info, err := s.Do("INFO", "commandstats")
		require.NoError(t, err)
		for _, line := range strings.Split(info, "\n") {
			line = strings.TrimSpace(line)
			if !strings.HasPrefix(line, "cmdstat_cluster|shards:") && !strings.HasPrefix(line, "cmdstat_cluster|slots:") {
				continue
			}
			_, rest, _ := strings.Cut(line, "calls=")
			calls, _, _ := strings.Cut(rest, ",")
			v, err := strconv.ParseInt(calls, 10, 64)
			require.NoError(t, err, "%q", line)
			n += v
		}
	}
	return n
}

// A storm of MOVED replies (many callers at once, on many slots that
// moved) asks the cluster for its topology a bounded number of times:
// refreshes are coalesced and at most one starts per MinRefreshInterval,
// however many redirects ask for one.
func TestReview21MovedStormBoundsTopologyQueries(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster")
	}
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	ms := rc.Masters()
	require.Len(t, ms, 3)
	from, to := ms[0], ms[1]

	// 16 slots of from, each with a key (written only once moved: a slot
	// that holds keys cannot be given away without them).
	var keys []string
	var slots []int
	seen := map[int]bool{}
	for i := 0; len(keys) < 16; i++ {
		k := fmt.Sprintf("{r21storm%d}:k", i)
		slot := cluster.Slot(k)
		owner, err := rc.MasterOfSlot(slot)
		require.NoError(t, err)
		if owner != from || seen[slot] {
			continue
		}
		seen[slot] = true
		keys, slots = append(keys, k), append(slots, slot)
	}

	const minRefresh = time.Second
	cfg := clusterConfig(rc.Seeds()...)
	cfg.Cluster.RefreshInterval = -1
	cfg.Cluster.MinRefreshInterval = minRefresh
	c := newClient(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, slot := range slots {
		assignSlot(t, slot, from, to)
	}

	before := topologyCalls(t, rc.Nodes)
	start := time.Now()
	const workers, rounds = 32, 10
	errs := make(chan error, workers*rounds)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for r := 0; r < rounds; r++ {
				if _, err := c.Do(ctx, "SET", keys[(w+r)%len(keys)], w); err != nil {
					errs <- err
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	moved, _, _ := stats(c)
	require.GreaterOrEqual(t, moved, int64(len(slots)), "every moved slot met a MOVED")
	// Let an owed refresh, held back by the rate limit, run.
	waitFor(t, 30*time.Second, "the owed refresh", func() bool {
		return time.Since(start) > 2*minRefresh
	})
	elapsed := time.Since(start)
	calls := topologyCalls(t, rc.Nodes) - before
	// One refresh per MinRefreshInterval, plus the one in flight and the
	// one owed; each may ask every node (hedging a slow one).
	limit := (int64(elapsed/minRefresh) + 3) * int64(len(rc.Nodes))
	t.Logf("%d MOVED, %d topology queries in %v (limit %d)", moved, calls, elapsed, limit)
	require.LessOrEqual(t, calls, limit, "topology queries for %d MOVED", moved)
	require.Positive(t, calls, "the MOVEDs asked for a refresh")
}
