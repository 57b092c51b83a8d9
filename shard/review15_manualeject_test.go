package shard_test

import (
	"testing"
	"time"

	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A shard the operator ejected by hand (for maintenance, say) stays out
// of the ring when its server goes down and comes back: AutoEject puts
// back only the shards it took out itself, and tells of no restore that
// no ejection of its own preceded.
func TestReview15ManualEjectHoldsAcrossDownAndUp(t *testing.T) {
	rr, servers, got := nodeEventRing(t)
	require.NoError(t, rr.Eject(1))
	victim := servers[1]
	require.NoError(t, victim.Kill())
	waitFor(t, 10*time.Second, "down", func() bool { return len(got()) >= 1 })
	require.NoError(t, victim.Restart())
	waitFor(t, 10*time.Second, "up", func() bool { return len(got()) >= 2 })
	assert.True(t, rr.Ejected(1), "a shard ejected by hand is still out after its server came back")
	// Down again: its events come after whatever the coming up queued.
	require.NoError(t, victim.Kill())
	waitFor(t, 10*time.Second, "down again", func() bool { return len(got()) >= 3 })
	assert.Equal(t, []shard.NodeEventKind{shard.NodeDown, shard.NodeUp, shard.NodeDown}, got())
	assert.True(t, rr.Ejected(1))

	// The operator's restore puts it back; AutoEject then handles it as
	// any other shard.
	require.NoError(t, victim.Restart())
	waitFor(t, 10*time.Second, "up again", func() bool { return len(got()) >= 4 })
	require.NoError(t, rr.Restore(1))
	require.False(t, rr.Ejected(1))
	require.NoError(t, victim.Kill())
	waitFor(t, 10*time.Second, "down and ejected", func() bool { return len(got()) >= 6 })
	require.NoError(t, victim.Restart())
	waitFor(t, 10*time.Second, "up and restored", func() bool { return len(got()) >= 8 })
	assert.Equal(t, []shard.NodeEventKind{
		shard.NodeDown, shard.NodeUp, shard.NodeDown, shard.NodeUp,
		shard.NodeDown, shard.NodeEjected, shard.NodeUp, shard.NodeRestored,
	}, got())
	assert.False(t, rr.Ejected(1))
}

// A shard that AutoEject took out and that the operator then ejects by
// hand too is the operator's: it stays out when its server comes back.
func TestReview15ManualEjectOfAnAutoEjectedShardHolds(t *testing.T) {
	rr, servers, got := nodeEventRing(t)
	victim := servers[1]
	require.NoError(t, victim.Kill())
	waitFor(t, 10*time.Second, "down and ejected", func() bool { return len(got()) >= 2 })
	require.Equal(t, []shard.NodeEventKind{shard.NodeDown, shard.NodeEjected}, got())
	require.NoError(t, rr.Eject(1)) // by hand, while it is out already
	require.NoError(t, victim.Restart())
	waitFor(t, 10*time.Second, "up", func() bool { return len(got()) >= 3 })
	assert.True(t, rr.Ejected(1), "a shard ejected by hand is still out after its server came back")
	require.NoError(t, victim.Kill())
	waitFor(t, 10*time.Second, "down again", func() bool { return len(got()) >= 4 })
	assert.Equal(t, []shard.NodeEventKind{shard.NodeDown, shard.NodeEjected, shard.NodeUp, shard.NodeDown}, got())
}
