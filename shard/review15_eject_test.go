package shard_test

import (
	"testing"
	"time"

	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A node that the user restored by hand while it was down is in the ring
// already when it answers again: AutoEject restores nothing then, and the
// NodeState hook hears of no second restore (which metrics would count as
// one more restore than there were ejections).
func TestReview15NoRestoreEventForANodeAlreadyInTheRing(t *testing.T) {
	rr, servers, got := nodeEventRing(t)
	victim := servers[1]
	require.NoError(t, victim.Kill())
	waitFor(t, 10*time.Second, "down and ejected", func() bool { return len(got()) >= 2 })
	require.Equal(t, []shard.NodeEventKind{shard.NodeDown, shard.NodeEjected}, got())
	require.True(t, rr.Ejected(1))

	require.NoError(t, rr.Restore(1)) // by hand, while it is down
	require.False(t, rr.Ejected(1))
	require.NoError(t, victim.Restart())
	waitFor(t, 10*time.Second, "up", func() bool { return len(got()) >= 3 })
	// Down again: its events come after whatever the node's coming up
	// queued, so the list then shows all of them.
	require.NoError(t, victim.Kill())
	waitFor(t, 10*time.Second, "down and ejected again", func() bool { return len(got()) >= 5 })
	assert.Equal(t, []shard.NodeEventKind{
		shard.NodeDown, shard.NodeEjected, shard.NodeUp,
		shard.NodeDown, shard.NodeEjected,
	}, got())
}
