package reshard_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview14ETAFollowsThePace: under a pace (--rate, KeysPerSecond)
// the ETA is the time the keys left take at that pace. It was the keys
// left over the scan's average rate since Move began, a span that counted
// the time Move waited before it scanned anything (here 2 s for a
// process to acknowledge the fence): a quarter of the way through 2,000
// keys at 400 keys/s the ETA read 10.3 s for 3.75 s of work.
func TestReview14ETAFollowsThePace(t *testing.T) {
	const n, rate = 2000, 400.0
	const hold = 2 * time.Second // how long the migrating process takes to acknowledge the fence
	servers, from, to := moveAll(t)
	fill(t, from, "eta", n)

	// A process on the migration (its beacon) that acknowledges the
	// fence by closing its connection, hold after the fence went up.
	fenced := func(v string) bool { p, _, ok := shard.ParseFenceValue(v); return ok && p == shard.PhaseFenced }
	acked := servers[0].LeaveAfterTB(t, fmt.Sprintf("shardis:eta1:migrating:%s>%s", shard.TopologyID(from), shard.TopologyID(to)),
		shard.FenceKey(shard.TopologyID(from), shard.TopologyID(to)), fenced, hold)

	type sample struct {
		scanned, total int64
		eta            time.Duration
	}
	var mu sync.Mutex
	var samples []sample
	rep, err := reshard.Move(context.Background(), reshard.Options{From: from, To: to, KeysPerSecond: rate, SkipClientCheck: true,
		Progress: func(p reshard.Progress) {
			if p.Done {
				return
			}
			mu.Lock()
			samples = append(samples, sample{p.Scanned, p.Total, p.ETA})
			mu.Unlock()
		}})
	require.NoError(t, err)
	require.NoError(t, <-acked, "the process acknowledging the fence")
	require.EqualValues(t, n, rep.Moved)
	mu.Lock()
	defer mu.Unlock()
	checked := 0
	for _, s := range samples {
		// A quarter to two thirds through: past the first batches, and
		// with seconds of work left.
		if s.scanned < s.total/4 || s.scanned > 2*s.total/3 {
			continue
		}
		checked++
		want := time.Duration(float64(s.total-s.scanned) / rate * float64(time.Second))
		assert.InDelta(t, want.Seconds(), s.eta.Seconds(), 0.35*want.Seconds()+0.3,
			"ETA at %d of %d keys at a pace of %v keys/s", s.scanned, s.total, rate)
	}
	require.Greater(t, checked, 3, "progress reports in the middle of the move")
}
