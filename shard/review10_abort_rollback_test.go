package shard_test

import (
	"context"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview10AbortingARollbackBeforeItsFence: AbortMigration of an armed
// migration A -> B is the rollback B -> A, which waits behind its own
// fence, routing by B and moving keys forward. Aborting that rollback
// before its fence went up took it for a migration that had moved
// nothing: the client left every migration and routed by B alone, while
// the keys not moved yet still sat at A — a read missed them, and a
// write started a fresh value at B (which the mover's next MIGRATE would
// keep, deleting the old one as busy). It now goes back to the armed
// migration A -> B: reads find the keys at A, and writes move them.
func TestReview10AbortingARollbackBeforeItsFence(t *testing.T) {
	ctx := context.Background()
	s := newSwitchSetup(t, 2*time.Second)
	c := s.migrating(t, nil)
	s.fenceAndArm(t, c)
	keys := s.moving(t, "review10ab", 2)
	for _, k := range keys {
		s.setAtOldOwner(t, k, "v-"+k)
	}
	require.NoError(t, c.AbortMigration(ctx)) // the rollback, behind its fence
	info, on := c.Migration()
	require.True(t, on)
	require.Equal(t, shard.PhaseWaiting, info.Phase)

	require.NoError(t, c.AbortMigration(ctx)) // and back
	info, on = c.Migration()
	require.True(t, on, "aborting the rollback left every migration, with keys still at their old owners")
	assert.Equal(t, shard.PhaseArmed, info.Phase)
	assert.Equal(t, shard.TopologyID(s.from), info.FromID)
	assert.Equal(t, shard.TopologyID(s.to), info.ToID)

	v, err := redis.String(c.Do(ctx, "GET", keys[0]))
	require.NoError(t, err, "a read of a key not moved yet")
	assert.Equal(t, "v-"+keys[0], v)
	n, err := redis.Int(c.Do(ctx, "APPEND", keys[1], "+"))
	require.NoError(t, err)
	assert.Equal(t, len("v-"+keys[1]+"+"), n, "a write did not continue the value at the old owner")
	got, err := serversByAddr(s.servers)[ringOwner(t, s.to, keys[1])].Do("GET", keys[1])
	require.NoError(t, err)
	assert.Equal(t, "v-"+keys[1]+"+", got, "the written key is not at its new owner")
	// The beacons say so on the old nodes: the mover sees a process armed A -> B.
	waitFor(t, 10*time.Second, "an armed beacon on the old nodes", func() bool { return s.beaconSays(shard.PhaseArmed) })
}

// TestReview10AbortingAFencedRollbackIsRefused: once the rollback's fence
// is up, the client routes by the old topology and other processes may
// have acknowledged it; a fence never goes back, so AbortMigration is
// refused (ErrMigration) and the rollback goes on, its beacons on the
// nodes it leaves acknowledging the fence.
func TestReview10AbortingAFencedRollbackIsRefused(t *testing.T) {
	ctx := context.Background()
	s := newSwitchSetup(t, 2*time.Second)
	c := s.migrating(t, nil)
	s.fenceAndArm(t, c)
	require.NoError(t, c.AbortMigration(ctx))
	s.mark(t, c, shard.PhaseFenced) // the rollback's marker
	waitFor(t, 10*time.Second, "the rollback to switch", func() bool {
		i, _ := c.Migration()
		return i.Phase == shard.PhaseFenced
	})
	err := c.AbortMigration(ctx)
	require.ErrorIs(t, err, shard.ErrMigration)
	info, on := c.Migration()
	require.True(t, on)
	assert.Equal(t, shard.PhaseFenced, info.Phase)
	assert.Equal(t, shard.TopologyID(s.to), info.FromID, "not the rollback any more")
	waitFor(t, 10*time.Second, "the rollback's beacons to acknowledge its fence", func() bool { return s.beaconSays(shard.PhaseFenced) })
	s.mark(t, c, shard.PhaseArmed)
	waitFor(t, 10*time.Second, "the rollback to arm", func() bool {
		i, _ := c.Migration()
		return i.Phase == shard.PhaseArmed
	})
}
