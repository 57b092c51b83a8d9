package shard_test

import (
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
)

// topologyReads sums the topology queries (CLUSTER SHARDS, CLUSTER SLOTS)
// the servers have answered (INFO commandstats).
func topologyReads(t *testing.T, servers []*redistest.Server) int {
	t.Helper()
	total := 0
	for _, s := range servers {
		for _, cmd := range []string{"cluster|shards", "cluster|slots"} {
			n, err := s.CommandCalls(cmd)
			require.NoError(t, err)
			total += n
		}
	}
	return total
}

// A master of the old cluster of a client built with Config.Migration
// dies while the client waits; the application keeps using its slots.
// Each retry of each command asked for a read of the old cluster's
// topology, one at a time but with no least interval between two: the
// old cluster's nodes answered a topology query back to back for as long
// as the callers kept trying, where the client's own cluster is queried
// at most once per MinRefreshInterval.
func TestReview12OldClusterTopologyReadsAreRateLimited(t *testing.T) {
	ctx := oldClusterContext(t, 90*time.Second)
	old, c, onOld, _ := oldClusterWaiting(t, 500*time.Millisecond)
	require.NoError(t, onOld.Close()) // its own refreshes would count too
	key := "r12oldrate:{" + strconv.FormatUint(rand.Uint64(), 36) + "}"
	owner, _ := ownerAndOther(t, old, key)
	var alive []*redistest.Server
	for _, m := range old.Masters() {
		if m != owner {
			alive = append(alive, m)
		}
	}
	require.Len(t, alive, 2)
	require.NoError(t, owner.Stop())

	before := topologyReads(t, alive)
	const (
		callers = 16
		run     = 3 * time.Second
	)
	var (
		wg       sync.WaitGroup
		attempts atomic.Int64
		served   atomic.Int64
	)
	start := time.Now()
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Since(start) < run && ctx.Err() == nil {
				attempts.Add(1)
				if _, err := c.Do(ctx, "GET", key); err == nil {
					served.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	reads := topologyReads(t, alive) - before
	// MinRefreshInterval is 100 ms (the default): at most one read per
	// interval, and a few more for the timing of the first and the last.
	limit := int(took/(100*time.Millisecond)) + 5
	t.Logf("%d callers, %d GETs over %v: %d topology reads at the old cluster's live nodes (limit %d)",
		callers, attempts.Load(), took.Round(time.Millisecond), reads, limit)
	assert.Zero(t, served.Load(), "a GET was served while the slot's only node is down")
	assert.GreaterOrEqual(t, reads, 1, "the old cluster's topology is read again")
	assert.LessOrEqual(t, reads, limit, "the old cluster's topology is read at most once per MinRefreshInterval")
}
