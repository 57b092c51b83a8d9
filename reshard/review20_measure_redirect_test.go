package reshard_test

import (
	"context"
	"sync"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/shard"
)

// TestReview20BytesCountKeysRedirectedWhenMeasured: the keys of a slot
// leave their master of the old cluster (moved by its operator: MOVED;
// being moved: ASK) after the page is sorted, before MEMORY USAGE, which
// answers with the redirect. The mover follows it and moves them, but
// they counted no bytes: Report.Bytes and Flow.Bytes fell short by
// theirs, and a pace in bytes let them through unbooked. They are now
// measured where they went.
func TestReview20BytesCountKeysRedirectedWhenMeasured(t *testing.T) {
	for _, tt := range []struct {
		name string
		hook func(r *fallbackRig) error
		opts reshard.Options
	}{
		{"slot being moved (ASK)", func(r *fallbackRig) error { return r.halfMove(r.tagKeys) }, reshard.Options{}},
		{"slot moved (MOVED)", func(r *fallbackRig) error { return r.moveSlot() }, reshard.Options{}},
		{"slot being moved (ASK), paced in bytes", func(r *fallbackRig) error { return r.halfMove(r.tagKeys) }, reshard.Options{BytesPerSecond: 1 << 30}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newFallbackRig(t)
			// Each key's size where it is before the move.
			var want int64
			for _, k := range r.keys {
				m, err := r.old.MasterOfSlot(cluster.Slot(k))
				require.NoError(t, err)
				c := newRawConn(t, m)
				size, err := redis.Int64(c.Do("MEMORY", "USAGE", k))
				require.NoError(t, err)
				require.Positive(t, size, k)
				want += size
			}
			var once sync.Once
			var hookErr error
			reshard.SetTestHookPage(func(n shard.Node) {
				if n.Addr == r.owner.Addr {
					once.Do(func() { hookErr = tt.hook(r) })
				}
			})
			defer reshard.SetTestHookPage(nil)
			opts := tt.opts
			opts.From, opts.To, opts.SkipClientCheck, opts.ScanCount = r.from, r.to, true, 1000
			rep, err := reshard.Move(context.Background(), opts)
			require.NoError(t, hookErr)
			require.EqualValues(t, 1, callsDone(&once), "the slot moved during the move")
			require.NoError(t, err)
			require.EqualValues(t, len(r.keys), rep.Moved)
			r.checkOut(t)
			assert.Equal(t, want, rep.Bytes, "Report.Bytes: the bytes of every key moved")
			var flows int64
			for _, f := range rep.Flows {
				flows += f.Bytes
			}
			assert.Equal(t, want, flows, "Flow.Bytes, summed")
		})
	}
}

// TestReview20DryRunLeavesOutKeysGoneWhenMeasured: half the keys of a
// page are deleted after its SCAN, before their MEMORY USAGE, which
// answers nil. A dry run counted them all the same, as keys it would
// move; the move itself skips them. It now counts only the keys there.
func TestReview20DryRunLeavesOutKeysGoneWhenMeasured(t *testing.T) {
	const n = 20
	servers, from, to := moveAll(t)
	fill(t, from, "g", n)
	gone := removeHalfOnFirstPage(t, servers[0].Addr, "g", n)
	rep, err := reshard.Move(context.Background(), reshard.Options{From: from, To: to, SkipClientCheck: true, ScanCount: 1000, DryRun: true})
	require.NoError(t, gone.err)
	require.NoError(t, err)
	require.EqualValues(t, 1, callsDone(&gone.once))
	assert.EqualValues(t, n/2, rep.Moved, "keys a move would move")
	assert.Equal(t, gone.want, rep.Bytes)
	require.Len(t, rep.Flows, 1)
	assert.EqualValues(t, n/2, rep.Flows[0].Keys, "Flow.Keys")
}
