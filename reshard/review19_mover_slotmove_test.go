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

// TestReview19MoverFollowsASlotMovedInTheOldCluster: the mover moves keys
// out of a cluster whose slot moves to another master (keys and all,
// every master told) after the mover sorted a page of the slot's master
// and before it moved the page's keys. The former master answered MOVED
// to the MIGRATE and the whole move failed; it now follows the MOVED and
// moves the keys from the slot's new master. Every key ends at its owner
// in the ring, once, with its value, and the verification is clean.
func TestReview19MoverFollowsASlotMovedInTheOldCluster(t *testing.T) {
	moverWithSlotMoved(t, false)
}

// TestReview19MoverFindsKeysOfASlotMovedBeforeItsScan: the slot moves
// after the mover read the old cluster's map and before any node is
// scanned. Its keys are found on their new master, which the mover's map
// did not name as their owner: they were taken for strays and left in
// the cluster, and the verification failed. A cluster's master holds only
// keys of the slots it serves (or imports): they are moved from there.
func TestReview19MoverFindsKeysOfASlotMovedBeforeItsScan(t *testing.T) {
	moverWithSlotMoved(t, true)
}

// moverWithSlotMoved runs a Move out of a cluster one of whose slots
// moves to another master inside it: before the first SCAN (beforeScan)
// or once the slot's master's page is sorted.
func moverWithSlotMoved(t *testing.T, beforeScan bool) {
	if testing.Short() {
		t.Skip("starts a cluster of its own")
	}
	ctx := context.Background()
	old := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	from := mustParse(t, clusterURL(old))
	to := mustParse(t, ringURL(servers, []string{"s0", "s1"}, nil))
	keys := slotKeys("slotmv", 40, 60)
	setEach(ctx, t, newClient(t, from), keys)
	slot := cluster.Slot("slotmv:{tag}:0")
	owner, other := ownerAndOther(t, old, slot)

	var once sync.Once
	var hookErr error
	move := func() {
		_, hookErr = redistest.MoveSlot(ctx, slot, owner, other, old.Masters(), redistest.SlotMoveOptions{})
	}
	if beforeScan {
		// Every node's drain waits in once.Do until the move is done.
		reshard.SetTestHookScan(func(shard.Node) { once.Do(move) })
		defer reshard.SetTestHookScan(nil)
	} else {
		reshard.SetTestHookPage(func(n shard.Node) {
			if n.Addr == owner.Addr {
				once.Do(move)
			}
		})
		defer reshard.SetTestHookPage(nil)
	}

	rep, err := reshard.Move(ctx, reshard.Options{From: from, To: to, SkipClientCheck: true, ScanCount: 1000})
	require.NoError(t, hookErr)
	require.NoError(t, err, "a slot moved inside the old cluster during the move")
	require.NotNil(t, rep.Verify)
	assert.Zero(t, rep.Verify.Misplaced)

	all := append(append([]*redistest.Server{}, old.Masters()...), servers...)
	dst := newClient(t, to)
	for _, k := range keys {
		at := placesOf(all, k)
		assert.Len(t, at, 1, "%s in exactly one place", k)
		v, err := dst.Do(ctx, "GET", k)
		require.NoError(t, err)
		assert.Equal(t, []byte("v-"+k), v, k)
	}
	assert.EqualValues(t, len(keys), rep.Moved)
	assert.Zero(t, rep.Strays)
}
