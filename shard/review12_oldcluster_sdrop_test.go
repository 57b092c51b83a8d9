package shard_test

import (
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// A shard channel on the old cluster while a client built with
// Config.Migration waits; its slot moves there, and the node drops the
// channel (a sunsubscribe push of its own). The subscription asked for a
// read of the client's own cluster, which knows nothing of the old one's
// slots, as it did each time it found a node missing while it placed its
// names (its first dial too): the old cluster's table, which places
// them, was never read. It is read now, and the client's own is left
// alone.
func TestReview12OldClusterDroppedShardChannelReadsTheOldTopology(t *testing.T) {
	ctx := oldClusterContext(t, 90*time.Second)
	old, c, onOld, _ := oldClusterWaiting(t, 5*time.Second)
	sch := "r12oldsdrop:{" + strconv.FormatUint(rand.Uint64(), 36) + "}"
	refreshes := c.Stats().Refreshes
	owner, dst := ownerAndOther(t, old, sch)
	sub := subscribedOnOld(ctx, t, c, sch, owner)
	require.NoError(t, onOld.Close()) // its own topology reads would count too

	oldReads := topologyReads(t, old.Masters())
	_, err := redistest.MoveSlot(ctx, cluster.Slot(sch), owner, dst, old.Masters(), redistest.SlotMoveOptions{})
	require.NoError(t, err)
	waitFor(t, 10*time.Second, "the shard channel at the slot's new owner on the old cluster", func() bool {
		return numSub(t, dst, "SHARDNUMSUB", sch) == 1
	})
	n, err := dst.Do("SPUBLISH", sch, "moved")
	require.NoError(t, err)
	require.Equal(t, "1", n)
	m, err := nextMessage(sub, 10*time.Second)
	require.NoError(t, err)
	assert.Equal(t, "moved", string(m.Data))

	read := false
	for deadline := time.Now().Add(10 * time.Second); !read && time.Now().Before(deadline); {
		if read = topologyReads(t, old.Masters()) > oldReads; !read {
			time.Sleep(20 * time.Millisecond)
		}
	}
	assert.True(t, read, "the old cluster's topology was not read in 10 s")
	assert.Equal(t, dst.Addr, shard.Review12OldClusterRoute(c, sch))
	// A read held back by MinRefreshInterval runs later: watch for one
	// over a few intervals.
	for end := time.Now().Add(time.Second); time.Now().Before(end) && c.Stats().Refreshes == refreshes; {
		time.Sleep(20 * time.Millisecond)
	}
	assert.Equal(t, refreshes, c.Stats().Refreshes,
		"the client's own cluster was read for the names the old cluster places")
}
