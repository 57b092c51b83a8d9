package reshard_test

import (
	"context"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/shard"
)

// abortSlotMove ends the rig's half-done slot move the way an operator
// who gives up does: SETSLOT STABLE on both masters (stable), or SETSLOT
// NODE naming the slot's master, at the importing master first. The keys
// that had left for the importing master stay there, in a slot it does
// not serve: the cluster answers MOVED for each of them everywhere.
func (r *fallbackRig) abortSlotMove(stable bool) error {
	slot := strconv.Itoa(r.slot)
	args := []string{"CLUSTER", "SETSLOT", slot, "STABLE"}
	if !stable {
		ownerID, err := r.owner.Do("CLUSTER", "MYID")
		if err != nil {
			return err
		}
		args = []string{"CLUSTER", "SETSLOT", slot, "NODE", ownerID}
	}
	for _, s := range []*redistest.Server{r.other, r.owner} {
		if _, err := s.Do(args...); err != nil {
			return err
		}
	}
	return nil
}

// checkAborted asserts what a move must leave after an operator aborted
// a slot move inside the old cluster: the keys that had left for the
// importing master (orphans) are still there, once, and on no other old
// master; every other key of the rig is gone from the old cluster and
// at exactly one ring server with its value and expiry (an orphan too,
// when the ring holds a copy of it: inRing).
func (r *fallbackRig) checkAborted(t *testing.T, orphans, inRing map[string]bool) {
	t.Helper()
	ctx := context.Background()
	found := map[string][]string{}
	for _, s := range r.old.Masters() {
		for _, k := range keysOn(t, s) {
			found[k] = append(found[k], s.Addr)
		}
	}
	dst := newClient(t, r.to)
	for _, k := range r.keys {
		if orphans[k] {
			assert.Equal(t, []string{r.other.Addr}, found[k], "%s stays where the aborted move left it, once", k)
		} else {
			assert.Empty(t, found[k], "%s left in the old cluster", k)
		}
		at := placesOf(r.servers, k)
		if orphans[k] && !inRing[k] {
			assert.Empty(t, at, "%s, out of the cluster's reach, was not moved: nothing read it", k)
			continue
		}
		require.Len(t, at, 1, "%s on exactly one ring server", k)
		r.checkInRing(ctx, t, dst, k)
	}
}

// TestReview20MoverWhenAnOperatorAbortsASlotMove: an operator is moving a
// slot inside the old cluster, half of its keys gone to the importing
// master, and gives up once the mover has sorted the page of the slot's
// master, before or while it moves the slot's keys.
//
// SETSLOT STABLE on both sides leaves the keys at the importing master
// out of the cluster's reach (MOVED there, missing at the slot's
// master): the mover can neither read nor move them. It moves every
// other key, loses and copies none, and fails with ErrMisplaced naming
// them as strays, after one more pass found nothing to move (three did,
// each finding them again), rather than succeed or loop.
//
// Aborted once a DUMP/RESTORE batch is restored and before its old
// copies are deleted, the keys that left meanwhile are both in the ring
// (restored, counted moved) and at the importing master, where the
// delete cannot reach them: the same error names them.
//
// SETSLOT NODE back to the slot's master changes nothing while it still
// holds keys of the slot (Redis keeps MIGRATING there, and IMPORTING at
// the other master, which the command does not name): the slot stays
// half moved, and the mover moves every key.
func TestReview20MoverWhenAnOperatorAbortsASlotMove(t *testing.T) {
	for _, tt := range []struct {
		name   string
		stable bool
		each   bool // aborted during the key-by-key fallback, not before the batch
		dump   bool // aborted once a DUMP/RESTORE batch is restored, before its deletes
	}{
		{"STABLE on both sides before the batch", true, false, false},
		{"NODE back to the source before the batch", false, false, false},
		{"STABLE on both sides mid-batch", true, true, false},
		{"STABLE on both sides between RESTORE and delete", true, false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newFallbackRig(t)
			newer := map[string]bool{}
			if tt.each {
				r.newerInRing(t)
				for i, k := range r.tagKeys {
					newer[k] = i%3 == 1 // as newerInRing writes them
				}
			}
			orphans := map[string]bool{}
			var once sync.Once
			var hookErr error
			abort := func(gone []string) {
				for _, k := range gone {
					orphans[k] = true
				}
				if hookErr = r.halfMove(gone); hookErr == nil {
					hookErr = r.abortSlotMove(tt.stable)
				}
			}
			opts := reshard.Options{From: r.from, To: r.to, SkipClientCheck: true, ScanCount: 1000, Dump: tt.dump}
			switch {
			case tt.dump:
				reshard.SetTestHookDelete(func(n shard.Node, keys []string) {
					if n.Addr == r.owner.Addr && hasTagKey(keys) {
						gone := firstTagKeys(keys, 8)
						once.Do(func() { abort(gone) })
					}
				})
				defer reshard.SetTestHookDelete(nil)
			case tt.each:
				var mu sync.Mutex
				seen := map[string]bool{}
				reshard.SetTestHookEach(func(n shard.Node, k string) {
					if n.Addr != r.owner.Addr {
						return
					}
					mu.Lock()
					defer mu.Unlock()
					seen[k] = true
					if len(seen) != 2 {
						return
					}
					var later []string
					for _, tk := range r.tagKeys {
						if n, err := r.owner.Do("EXISTS", tk); !seen[tk] && err == nil && n == "1" {
							later = append(later, tk)
						}
					}
					once.Do(func() { abort(later) })
				})
				defer reshard.SetTestHookEach(nil)
			default:
				reshard.SetTestHookPage(func(n shard.Node) {
					if n.Addr == r.owner.Addr {
						once.Do(func() { abort(r.tagKeys[:len(r.tagKeys)/2]) })
					}
				})
				defer reshard.SetTestHookPage(nil)
			}

			rep, err := reshard.Move(context.Background(), opts)
			require.NoError(t, hookErr)
			require.EqualValues(t, 1, callsDone(&once), "the slot move was aborted during the move")
			require.NotEmpty(t, orphans)
			if !tt.stable {
				require.NoError(t, err, "the slot stays half moved")
				require.NotNil(t, rep.Verify)
				assert.Zero(t, rep.Verify.Misplaced)
				r.checkOut(t)
				assert.EqualValues(t, len(r.keys), rep.Moved)
				return
			}
			require.ErrorIs(t, err, reshard.ErrMisplaced)
			assert.Contains(t, err.Error(), "stray")
			require.NotNil(t, rep)
			require.NotNil(t, rep.Verify)
			assert.EqualValues(t, len(orphans), rep.Verify.Misplaced)
			assert.EqualValues(t, len(orphans), rep.Verify.Strays)
			assert.Equal(t, 1, rep.Rescans, "a pass that moves nothing is not repeated")
			assert.Zero(t, rep.RescanMoved)
			if tt.dump {
				// Restored before the abort, and counted moved: the
				// ring's copy is the one the migration serves, and the
				// orphan, out of the cluster's reach, is a leftover the
				// verification names.
				r.checkAborted(t, orphans, orphans)
				assert.EqualValues(t, len(r.keys), rep.Moved)
				return
			}
			r.checkAborted(t, orphans, newer)
			busy := 0
			for k := range newer {
				if newer[k] && !orphans[k] {
					busy++
				}
			}
			assert.EqualValues(t, len(r.keys)-len(orphans)-busy, rep.Moved)
		})
	}
}
