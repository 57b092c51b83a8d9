package reshard_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/shard"
)

// TestReview20MoverFollowsASlotMovedInTheNewCluster: the mover moves a
// ring into a cluster one of whose slots moves to another master (every
// master told) after the mover read the new cluster's map and before it
// scanned the ring. The slot's former master refuses the RESTORE of the
// slot's keys with MOVED (inside MIGRATE: "Target instance replied with
// error: MOVED"). Every key must end in the cluster, once, with its value,
// at the slot's new master, and the verification be clean.
func TestReview20MoverFollowsASlotMovedInTheNewCluster(t *testing.T) {
	for _, tc := range []struct {
		name string
		dump bool
	}{{"migrate", false}, {"dump", true}} {
		t.Run(tc.name, func(t *testing.T) {
			servers, rc, from, to := startRingToCluster(t)
			ctx := context.Background()
			keys := slotKeys("newmv", 40, 60)
			setEach(ctx, t, newClient(t, from), keys)
			slot := cluster.Slot("newmv:{tag}:0")
			owner, other := ownerAndOther(t, rc, slot)

			var once sync.Once
			var hookErr error
			reshard.SetTestHookScan(func(shard.Node) {
				once.Do(func() {
					_, hookErr = redistest.MoveSlot(ctx, slot, owner, other, rc.Masters(), redistest.SlotMoveOptions{})
				})
			})
			defer reshard.SetTestHookScan(nil)

			rep, err := reshard.Move(ctx, reshard.Options{From: from, To: to, SkipClientCheck: true, ScanCount: 1000, Dump: tc.dump})
			require.NoError(t, hookErr)
			require.EqualValues(t, 1, callsDone(&once), "the slot moved during the move")
			require.NoError(t, err, "a slot moved inside the new cluster during the move")
			require.NotNil(t, rep.Verify)
			assert.Zero(t, rep.Verify.Misplaced)

			all := append(append([]*redistest.Server{}, servers...), rc.Masters()...)
			for _, k := range keys {
				at := placesOf(all, k)
				if assert.Len(t, at, 1, "%s in exactly one place", k) && cluster.Slot(k) == slot {
					assert.Equal(t, other.Addr, at[0], "%s at its slot's new master", k)
				}
				v, err := other.Do("GET", k)
				if cluster.Slot(k) == slot {
					require.NoError(t, err)
					assert.Equal(t, "v-"+k, v, k)
				}
			}
			assert.EqualValues(t, len(keys), rep.Moved)
			assert.Zero(t, rep.Strays)
		})
	}
}

// TestReview20MoverGivesUpOnASlotThatKeepsMovingInTheNewCluster: the
// slot of a batch's keys moves to another master of the new cluster each
// time the batch begins, past the cluster's MaxRedirects: the move fails
// with a *shard.RetryError (shard.ErrRetryBudget) that names the MOVED,
// no key is lost or left in two places, and a run again ends clean.
func TestReview20MoverGivesUpOnASlotThatKeepsMovingInTheNewCluster(t *testing.T) {
	servers, rc, from, to := startRingToCluster(t)
	ctx := context.Background()
	to.Cluster.MaxRedirects = 1
	keys := slotKeys("newloop", 20, 0)
	setEach(ctx, t, newClient(t, from), keys)
	slot := cluster.Slot(keys[0])
	owner, other := ownerAndOther(t, rc, slot)

	var mu sync.Mutex
	var hookErr error
	moves := 0
	at, next := owner, other
	reshard.SetTestHookDump(func(_ shard.Node, ks []string) {
		mu.Lock()
		defer mu.Unlock()
		if hookErr != nil || len(ks) == 0 || cluster.Slot(ks[0]) != slot {
			return
		}
		_, hookErr = redistest.MoveSlot(ctx, slot, at, next, rc.Masters(), redistest.SlotMoveOptions{})
		at, next = next, at
		moves++
	})
	rep, err := reshard.Move(ctx, reshard.Options{From: from, To: to, SkipClientCheck: true, ScanCount: 1000, Dump: true})
	reshard.SetTestHookDump(nil)
	require.NoError(t, hookErr)
	require.Error(t, err, "the slot moved at every batch")
	assert.ErrorIs(t, err, shard.ErrRetryBudget)
	var rte *shard.RetryError
	require.ErrorAs(t, err, &rte)
	assert.Contains(t, rte.Last, "MOVED")
	assert.Equal(t, 2, moves, "the first batch, and one more after the MOVED (MaxRedirects 1)")
	if rep != nil {
		assert.Zero(t, rep.Moved, "nothing was restored for good")
	}

	all := append(append([]*redistest.Server{}, servers...), rc.Masters()...)
	for _, k := range keys {
		assert.Len(t, placesOf(all, k), 1, "%s in exactly one place after the failed run", k)
	}

	rep, err = reshard.Move(ctx, reshard.Options{From: from, To: to, SkipClientCheck: true, ScanCount: 1000, Dump: true})
	require.NoError(t, err, "a run again, the slot left alone")
	require.NotNil(t, rep.Verify)
	assert.Zero(t, rep.Verify.Misplaced)
	assert.EqualValues(t, len(keys), rep.Moved)
	for _, k := range keys {
		places := placesOf(all, k)
		if assert.Len(t, places, 1, "%s in exactly one place", k) {
			assert.Equal(t, at.Addr, places[0], "%s at its slot's master", k)
		}
		v, err := at.Do("GET", k)
		require.NoError(t, err)
		assert.Equal(t, "v-"+k, v, k)
	}
}

// TestReview20MoverFollowsASlotMovedInTheNewClusterKeyByKey: a batch
// into the new cluster met BUSYKEY (the new cluster holds one of its keys
// already), and its keys move one by one; the slot moves to another
// master of the new cluster, that key with it, before the first of them.
// The MIGRATE of a key answers "Target instance replied with error:
// MOVED": it is followed, the new cluster's copy wins, and every other key
// ends at the slot's new master, once.
func TestReview20MoverFollowsASlotMovedInTheNewClusterKeyByKey(t *testing.T) {
	servers, rc, from, to := startRingToCluster(t)
	ctx := context.Background()
	keys := slotKeys("newbusy", 20, 0)
	setEach(ctx, t, newClient(t, from), keys)
	slot := cluster.Slot(keys[0])
	owner, other := ownerAndOther(t, rc, slot)
	busyKey := keys[7]
	_, err := owner.Do("SET", busyKey, "new")
	require.NoError(t, err)

	var once sync.Once
	var hookErr error
	reshard.SetTestHookEach(func(shard.Node, string) {
		once.Do(func() {
			_, hookErr = redistest.MoveSlot(ctx, slot, owner, other, rc.Masters(), redistest.SlotMoveOptions{})
		})
	})
	defer reshard.SetTestHookEach(nil)

	rep, err := reshard.Move(ctx, reshard.Options{From: from, To: to, SkipClientCheck: true, ScanCount: 1000})
	require.NoError(t, hookErr)
	require.EqualValues(t, 1, callsDone(&once), "the keys moved one by one, the slot moved before")
	require.NoError(t, err, "a slot moved inside the new cluster during a key-by-key move")
	require.NotNil(t, rep.Verify)
	assert.Zero(t, rep.Verify.Misplaced)
	assert.EqualValues(t, len(keys)-1, rep.Moved)
	assert.EqualValues(t, 1, rep.Busy)

	all := append(append([]*redistest.Server{}, servers...), rc.Masters()...)
	for _, k := range keys {
		places := placesOf(all, k)
		if assert.Len(t, places, 1, "%s in exactly one place", k) {
			assert.Equal(t, other.Addr, places[0], "%s at its slot's new master", k)
		}
		want := "v-" + k
		if k == busyKey {
			want = "new"
		}
		v, err := other.Do("GET", k)
		require.NoError(t, err)
		assert.Equal(t, want, v, k)
	}
}
