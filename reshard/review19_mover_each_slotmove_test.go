package reshard_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/shard"
)

// fallbackTTL is the expiry (ms) set on every third key of a
// fallbackRig.
const fallbackTTL = 600000

// fallbackRig is an old cluster of three masters with keys to move to a
// ring of two servers: tagKeys in one slot (slot, served by owner), and
// keys spread over the others; every third key expires (fallbackTTL).
type fallbackRig struct {
	old          *redistest.Cluster
	servers      []*redistest.Server
	from, to     shard.Config
	tagKeys      []string
	keys         []string
	expiring     map[string]bool
	want         map[string]string // the value each key must hold in the ring
	slot         int
	owner, other *redistest.Server
}

func newFallbackRig(t *testing.T) *fallbackRig {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a cluster of its own")
	}
	ctx := context.Background()
	r := &fallbackRig{expiring: map[string]bool{}, want: map[string]string{}}
	r.old = redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	r.servers = redistest.StartNTB(t, 2, redistest.Options{})
	r.from = mustParse(t, clusterURL(r.old))
	r.to = mustParse(t, ringURL(r.servers, []string{"s0", "s1"}, nil))
	r.tagKeys = slotKeys("fb", 30, 0)
	r.keys = slotKeys("fb", 30, 40)
	src := newClient(t, r.from)
	for i, k := range r.keys {
		args := []any{k, "v-" + k}
		if i%3 == 0 {
			args = append(args, "PX", fallbackTTL)
			r.expiring[k] = true
		}
		_, err := src.Do(ctx, "SET", args...)
		require.NoError(t, err)
		r.want[k] = "v-" + k
	}
	r.slot = cluster.Slot(r.tagKeys[0])
	r.owner, r.other = ownerAndOther(t, r.old, r.slot)
	return r
}

// moveSlot moves the rig's slot, keys and all, from owner to other,
// telling every master.
func (r *fallbackRig) moveSlot() error {
	_, err := redistest.MoveSlot(context.Background(), r.slot, r.owner, r.other, r.old.Masters(), redistest.SlotMoveOptions{})
	return err
}

func hasTagKey(keys []string) bool {
	return slices.ContainsFunc(keys, func(k string) bool { return strings.Contains(k, "{tag}") })
}

// TestReview19MoverFollowsASlotMovedDuringItsKeyByKeyFallback: a batch
// of one slot meets BUSYKEY (the ring holds newer copies of some of its
// keys), and while its keys are moved one by one the slot moves to
// another master of the old cluster. The former master answered MOVED to
// the next key's MIGRATE and the move failed, the rest of the slot's keys
// left in the cluster; the key-by-key fallback now follows the MOVED.
// The newer copies win (counted busy, the old copies deleted), every
// other key moves with its value and expiry, and the verification is
// clean.
func TestReview19MoverFollowsASlotMovedDuringItsKeyByKeyFallback(t *testing.T) {
	r := newFallbackRig(t)
	ctx := context.Background()
	busy := r.newerInRing(t)
	var calls atomic.Int32
	var once sync.Once
	var hookErr error
	reshard.SetTestHookEach(func(n shard.Node, _ string) {
		if n.Addr == r.owner.Addr && calls.Add(1) == 2 {
			once.Do(func() { hookErr = r.moveSlot() })
		}
	})
	defer reshard.SetTestHookEach(nil)

	rep, err := reshard.Move(ctx, reshard.Options{From: r.from, To: r.to, SkipClientCheck: true, ScanCount: 1000})
	require.NoError(t, hookErr)
	require.EqualValues(t, 1, callsDone(&once), "the slot moved during the key-by-key fallback")
	require.NoError(t, err, "a slot moved inside the old cluster during the key-by-key fallback")
	require.NotNil(t, rep.Verify)
	assert.Zero(t, rep.Verify.Misplaced)
	r.checkOut(t)
	assert.EqualValues(t, len(r.keys)-busy, rep.Moved)
	assert.EqualValues(t, busy, rep.Busy)
}

// callsDone reports 1 when once has run its function, 0 otherwise.
func callsDone(once *sync.Once) int {
	ran := 1
	once.Do(func() { ran = 0 })
	return ran
}

// newerInRing writes a newer copy of every third key of the rig's slot
// at its ring owner (the move meets BUSYKEY for each, and the newer copy
// must win), and returns how many it wrote.
func (r *fallbackRig) newerInRing(t *testing.T) int {
	t.Helper()
	dst := newClient(t, r.to)
	busy := 0
	for i, k := range r.tagKeys {
		if i%3 == 1 {
			_, err := dst.Do(context.Background(), "SET", k, "newer-"+k)
			require.NoError(t, err)
			r.want[k] = "newer-" + k
			r.expiring[k] = false
			busy++
		}
	}
	return busy
}
