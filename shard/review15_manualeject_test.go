package shard_test

import (
	"sync"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// manualEjectRing starts two servers and an AutoEject ring client over
// them whose NodeState events are recorded; got returns them so far.
func manualEjectRing(t *testing.T) (*shard.RingRouter, []*redistest.Server, func() []shard.NodeEventKind) {
	t.Helper()
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	var mu sync.Mutex
	var kinds []shard.NodeEventKind
	got := func() []shard.NodeEventKind {
		mu.Lock()
		defer mu.Unlock()
		return append([]shard.NodeEventKind(nil), kinds...)
	}
	cfg := ringConfig(servers)
	cfg.Health.AutoEject = true
	cfg.Hooks = &shard.Hooks{NodeState: func(ev shard.NodeEvent) {
		mu.Lock()
		defer mu.Unlock()
		kinds = append(kinds, ev.Kind)
	}}
	c := newClient(t, cfg)
	rr, ok := c.Router().(*shard.RingRouter)
	require.True(t, ok, "a ring client's Router is its *RingRouter")
	return rr, servers, got
}

// A shard the operator ejected by hand (for maintenance, say) stays out
// of the ring when its server goes down and comes back: AutoEject puts
// back only the shards it took out itself, and tells of no restore that
// no ejection of its own preceded.
func TestReview15ManualEjectHoldsAcrossDownAndUp(t *testing.T) {
	rr, servers, got := manualEjectRing(t)
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
	rr, servers, got := manualEjectRing(t)
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
