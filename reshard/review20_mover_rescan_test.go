package reshard_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/shard"
)

// TestReview20MoverMovesASlotMovedToAScannedMaster: the operator of the
// old cluster moves a slot, keys and all, to a master whose drain the
// mover has already finished, before the mover scans the slot's former
// master. Neither scan saw the slot's keys: the closing verification
// found them on the old cluster, called them strays (its map of the
// cluster was the one read at the start) and the run failed, to be run
// again. The mover now scans again the old masters where its
// verification finds keys it moves, moves them and verifies again: one
// run ends clean, every key once in the ring with its value and expiry.
func TestReview20MoverMovesASlotMovedToAScannedMaster(t *testing.T) {
	r := newFallbackRig(t)
	otherDone := make(chan struct{})
	var closeOnce, once sync.Once
	var hookErr error
	reshard.SetTestHookDrained(func(n shard.Node) {
		if n.Addr == r.other.Addr {
			closeOnce.Do(func() { close(otherDone) })
		}
	})
	defer reshard.SetTestHookDrained(nil)
	reshard.SetTestHookScan(func(n shard.Node) {
		if n.Addr != r.owner.Addr {
			return
		}
		once.Do(func() {
			select {
			case <-otherDone:
				hookErr = r.moveSlot()
			case <-time.After(time.Minute):
				hookErr = errors.New("the other master's drain did not end")
			}
		})
	})
	defer reshard.SetTestHookScan(nil)

	rep, err := reshard.Move(context.Background(), reshard.Options{From: r.from, To: r.to, SkipClientCheck: true, ScanCount: 1000})
	require.NoError(t, hookErr)
	require.EqualValues(t, 1, callsDone(&once), "the slot moved during the move")
	require.NoError(t, err, "a slot moved to a master already scanned")
	require.NotNil(t, rep.Verify)
	assert.Zero(t, rep.Verify.Misplaced)
	r.checkOut(t)
	assert.EqualValues(t, len(r.keys), rep.Moved)
	assert.Zero(t, rep.Busy)
	assert.Zero(t, rep.Strays)
	assert.Equal(t, 1, rep.Rescans, "one pass after the verification")
	assert.EqualValues(t, len(r.tagKeys), rep.RescanMoved, "the slot's keys, moved after the verification")
}
