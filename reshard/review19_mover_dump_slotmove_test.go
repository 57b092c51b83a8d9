package reshard_test

import (
	"net"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/shard"
)

// TestReview19DumpMoveFollowsASlotMovedInTheOldCluster: with DUMP/RESTORE
// (Options.Dump), a slot moves to another master of the old cluster
// after the mover sorted its master's page. The former master answered
// MOVED to the DUMP of the slot's keys and the move failed; the keys are
// now moved from the slot's new master.
func TestReview19DumpMoveFollowsASlotMovedInTheOldCluster(t *testing.T) {
	r := newFallbackRig(t)
	var once sync.Once
	var hookErr error
	reshard.SetTestHookPage(func(n shard.Node) {
		if n.Addr == r.owner.Addr {
			once.Do(func() { hookErr = r.moveSlot() })
		}
	})
	defer reshard.SetTestHookPage(nil)
	moveAndCheck(t, r, "the slot moved", reshard.Options{Dump: true}, &once, &hookErr)
}

// TestReview19IOERRFallbackFollowsASlotMovedInTheOldCluster: the old
// nodes cannot reach the ring (Options.Addrs names a closed port), so
// every MIGRATE fails with IOERR and its keys move with DUMP/RESTORE
// through the mover; the slot moves inside the old cluster between the
// MIGRATE of its keys and their DUMP. The DUMP answered MOVED and the
// move failed; it now follows it.
func TestReview19IOERRFallbackFollowsASlotMovedInTheOldCluster(t *testing.T) {
	r := newFallbackRig(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := ln.Addr().String()
	require.NoError(t, ln.Close())
	addrs := map[string]string{}
	for _, s := range r.servers {
		addrs[s.Addr] = closed
	}
	var once sync.Once
	var hookErr error
	reshard.SetTestHookDump(func(n shard.Node, keys []string) {
		if n.Addr == r.owner.Addr && hasTagKey(keys) {
			once.Do(func() { hookErr = r.moveSlot() })
		}
	})
	defer reshard.SetTestHookDump(nil)
	moveAndCheck(t, r, "the slot moved", reshard.Options{Addrs: addrs, SkipProbe: true}, &once, &hookErr)
}

// TestReview19DumpMoveDeletesTheOldCopyAfterASlotMoved: the slot moves
// inside the old cluster once its keys are restored in the ring, before
// their old copies are deleted. The delete answered MOVED and the move
// failed, each key of the slot left in both topologies; the old copies
// are now deleted at the slot's new master, still only while they hold
// the value restored.
func TestReview19DumpMoveDeletesTheOldCopyAfterASlotMoved(t *testing.T) {
	r := newFallbackRig(t)
	var once sync.Once
	var hookErr error
	reshard.SetTestHookDelete(func(n shard.Node, keys []string) {
		if n.Addr == r.owner.Addr && hasTagKey(keys) {
			once.Do(func() { hookErr = r.moveSlot() })
		}
	})
	defer reshard.SetTestHookDelete(nil)
	moveAndCheck(t, r, "the slot moved", reshard.Options{Dump: true}, &once, &hookErr)
}
