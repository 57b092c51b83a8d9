package reshard_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/shard"
)

// halfMove leaves the rig's slot half moved inside the old cluster, as an
// operator's move in progress does: IMPORTING on other, MIGRATING on
// owner, and the keys leave (MIGRATE) owner for other. The slot stays so.
func (r *fallbackRig) halfMove(keys []string) error {
	ownerID, err := r.owner.Do("CLUSTER", "MYID")
	if err != nil {
		return err
	}
	otherID, err := r.other.Do("CLUSTER", "MYID")
	if err != nil {
		return err
	}
	slot := strconv.Itoa(r.slot)
	if _, err := r.other.Do("CLUSTER", "SETSLOT", slot, "IMPORTING", ownerID); err != nil {
		return err
	}
	if _, err := r.owner.Do("CLUSTER", "SETSLOT", slot, "MIGRATING", otherID); err != nil {
		return err
	}
	for _, k := range keys {
		v, err := r.owner.Do("MIGRATE", "127.0.0.1", strconv.Itoa(r.other.Port), "", "0", "5000", "KEYS", k)
		if err != nil {
			return err
		}
		if v != "OK" {
			return fmt.Errorf("MIGRATE %s: %s", k, v)
		}
	}
	return nil
}

// checkOut asserts that no key of the rig is left on a master of the old
// cluster (SCAN, which sees the keys of a half-moved slot on both of its
// masters) and that each is on exactly one server of the ring, with the
// value and the expiry it must have.
func (r *fallbackRig) checkOut(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	want := map[string]bool{}
	for _, k := range r.keys {
		want[k] = true
	}
	for _, s := range r.old.Masters() {
		for _, k := range keysOn(t, s) {
			assert.False(t, want[k], "%s left on old master %s", k, s.Addr)
		}
	}
	dst := newClient(t, r.to)
	for _, k := range r.keys {
		at := placesOf(r.servers, k)
		assert.Len(t, at, 1, "%s on exactly one ring server: %v", k, at)
		r.checkInRing(ctx, t, dst, k)
	}
}

// moveAndCheck runs a Move of the rig with opts, and checks that the
// hook did what (once) during it and that the move ended clean.
func moveAndCheck(t *testing.T, r *fallbackRig, what string, opts reshard.Options, once *sync.Once, hookErr *error) {
	t.Helper()
	opts.From, opts.To, opts.SkipClientCheck, opts.ScanCount = r.from, r.to, true, 1000
	rep, err := reshard.Move(context.Background(), opts)
	require.NoError(t, *hookErr)
	require.EqualValues(t, 1, callsDone(once), "%s during the move", what)
	require.NoError(t, err, "%s inside the old cluster during the move", what)
	require.NotNil(t, rep.Verify)
	assert.Zero(t, rep.Verify.Misplaced)
	r.checkOut(t)
	assert.EqualValues(t, len(r.keys), rep.Moved)
	assert.Zero(t, rep.Busy)
	assert.Zero(t, rep.Strays)
}

// TestReview19MoverFollowsTheASKOfAHalfMovedSlot: an operator is moving
// a slot inside the old cluster when the mover has sorted its master's
// page: the slot is MIGRATING there, IMPORTING at another master, and
// some of its keys (the first half: the batches hold keys on both
// masters, TRYAGAIN) or all of them (ASK) have left. The MIGRATE's
// transaction was refused and the move failed, the slot's keys left in
// the cluster. The mover now moves the keys still at the slot's master
// from there and those that left from the importing master (ASKING).
// Under a pace in bytes the MEMORY USAGE of a key that left, which
// answered ASK, failed the move too: such a key counts no bytes there.
func TestReview19MoverFollowsTheASKOfAHalfMovedSlot(t *testing.T) {
	for _, tt := range []struct {
		name string
		gone func(keys []string) []string
		opts reshard.Options
	}{
		{"some keys gone", func(ks []string) []string { return ks[:len(ks)/2] }, reshard.Options{}},
		{"every key gone", func(ks []string) []string { return ks }, reshard.Options{}},
		// A pace in bytes needs every key's size: MEMORY USAGE of a key
		// that left answers ASK.
		{"some keys gone, paced in bytes", func(ks []string) []string { return ks[:len(ks)/2] }, reshard.Options{BytesPerSecond: 1 << 30}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newFallbackRig(t)
			var once sync.Once
			var hookErr error
			reshard.SetTestHookPage(func(n shard.Node) {
				if n.Addr == r.owner.Addr {
					once.Do(func() { hookErr = r.halfMove(tt.gone(r.tagKeys)) })
				}
			})
			defer reshard.SetTestHookPage(nil)
			moveAndCheck(t, r, "the slot was half moved", tt.opts, &once, &hookErr)
		})
	}
}

// TestReview19DumpMoveFollowsTheASKOfAHalfMovedSlot: with DUMP/RESTORE
// (Options.Dump), half of the slot's keys leave for the importing master
// as the batch begins. The DUMP of those answered ASK and the move
// failed; they are now dumped at the importing master (ASKING) and
// deleted there once restored.
func TestReview19DumpMoveFollowsTheASKOfAHalfMovedSlot(t *testing.T) {
	r := newFallbackRig(t)
	var once sync.Once
	var hookErr error
	reshard.SetTestHookDump(func(n shard.Node, keys []string) {
		if n.Addr == r.owner.Addr && hasTagKey(keys) {
			once.Do(func() { hookErr = r.halfMove(r.tagKeys[:len(r.tagKeys)/2]) })
		}
	})
	defer reshard.SetTestHookDump(nil)
	moveAndCheck(t, r, "the slot was half moved", reshard.Options{Dump: true}, &once, &hookErr)
}

// TestReview19DumpMoveDeletesAtTheImportingMaster: the slot's keys are
// restored in the ring, and half of them leave for the importing master
// before their old copies are deleted. The delete answered ASK and the
// move failed, those keys left in both topologies; their old copies are
// now deleted at the importing master, still only while they hold the
// value restored.
func TestReview19DumpMoveDeletesAtTheImportingMaster(t *testing.T) {
	r := newFallbackRig(t)
	var once sync.Once
	var hookErr error
	reshard.SetTestHookDelete(func(n shard.Node, keys []string) {
		if n.Addr == r.owner.Addr && hasTagKey(keys) {
			gone := firstTagKeys(keys, 8)
			once.Do(func() { hookErr = r.halfMove(gone) })
		}
	})
	defer reshard.SetTestHookDelete(nil)
	moveAndCheck(t, r, "the slot was half moved", reshard.Options{Dump: true}, &once, &hookErr)
}

// TestReview19KeyByKeyFallbackFollowsTheASKOfAHalfMovedSlot: a batch of
// one slot meets BUSYKEY (the ring holds newer copies of some of its
// keys), and while its keys are moved one by one an operator begins to
// move the slot inside the old cluster, the keys not yet reached leaving
// for the importing master. A bare MIGRATE at the slot's migrating master
// answered NOKEY for each of them, taken for "gone": they were left in
// the cluster, and the verification failed. Each is now moved from the
// importing master (the newer copies win, the old ones deleted there).
func TestReview19KeyByKeyFallbackFollowsTheASKOfAHalfMovedSlot(t *testing.T) {
	r := newFallbackRig(t)
	ctx := context.Background()
	busy := r.newerInRing(t)
	var mu sync.Mutex
	seen := map[string]bool{}
	var once sync.Once
	var hookErr error
	reshard.SetTestHookEach(func(n shard.Node, k string) {
		if n.Addr != r.owner.Addr {
			return
		}
		mu.Lock()
		seen[k] = true
		if len(seen) == 2 {
			var later []string
			for _, tk := range r.tagKeys {
				// Those the batch moved before its BUSYKEY are gone.
				if n, err := r.owner.Do("EXISTS", tk); !seen[tk] && err == nil && n == "1" {
					later = append(later, tk)
				}
			}
			once.Do(func() { hookErr = r.halfMove(later) })
		}
		mu.Unlock()
	})
	defer reshard.SetTestHookEach(nil)

	rep, err := reshard.Move(ctx, reshard.Options{From: r.from, To: r.to, SkipClientCheck: true, ScanCount: 1000})
	require.NoError(t, hookErr)
	require.EqualValues(t, 1, callsDone(&once), "the slot was half moved during the key-by-key fallback")
	require.NoError(t, err, "a slot half moved inside the old cluster during the key-by-key fallback")
	require.NotNil(t, rep.Verify)
	assert.Zero(t, rep.Verify.Misplaced)
	r.checkOut(t)
	assert.EqualValues(t, len(r.keys)-busy, rep.Moved)
	assert.EqualValues(t, busy, rep.Busy)
}
