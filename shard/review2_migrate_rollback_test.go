package shard_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview2RollbackFenceWaitsForACommandPlannedBeforeTheTurn: an INCR
// planned while the forward migration was armed (its key moved forward,
// the command about to run at the new owner) is still running when the
// client turns around (AbortMigration). The reverse fence must not be
// acknowledged until it has ended: otherwise the reverse moves bring the
// key back to its old owner and the INCR, run late at the new owner,
// starts a fresh counter there (an acknowledged increment lost, a wrong
// reply). Fails when the reverse switch waits only for the commands
// planned after the turn.
func TestReview2RollbackFenceWaitsForACommandPlannedBeforeTheTurn(t *testing.T) {
	ctx := context.Background()
	s := newSwitchSetup(t, 20*time.Second)
	gate := newHoldGate()
	gate.holdPlanned(t, "INCR")
	c := s.migrating(t, nil)
	s.fenceAndArm(t, c)
	k := s.moving(t, "rbi", 1)[0]
	oldOwner := s.setAtOldOwner(t, k, "5")
	var got atomic.Int64
	done := gate.hold(t, func() error {
		n, err := redis.Int64(c.Do(ctx, "INCR", k))
		got.Store(n)
		return err
	})
	require.NoError(t, c.AbortMigration(ctx))
	s.fenceOverHeld(t, c, gate.release, done, "an INCR planned before the turn was running")
	assert.Equal(t, int64(6), got.Load(), "the held INCR continues the counter")
	n, err := redis.Int64(c.Do(ctx, "INCR", k)) // moves the key back first
	require.NoError(t, err)
	assert.Equal(t, int64(7), n)
	assert.Equal(t, []string{oldOwner}, holders(t, s.servers, k), "back at its owner in the old topology, only there")
}

// TestReview2RollbackFenceRefusesAConnTxPlannedBeforeTheTurn: a Conn's
// MULTI opened while the forward migration was armed (pinned at the key's
// new owner) must not run its EXEC there once a rollback has switched and
// the key may have moved back: it would write a fresh copy at the node
// the key left (a lost increment, a key in two places). EXEC fails as an
// aborted transaction, with nothing run.
func TestReview2RollbackFenceRefusesAConnTxPlannedBeforeTheTurn(t *testing.T) {
	ctx := context.Background()
	s := newSwitchSetup(t, 5*time.Second)
	c := s.migrating(t, nil)
	s.fenceAndArm(t, c)
	k := s.moving(t, "rbc", 1)[0]
	oldOwner := s.setAtOldOwner(t, k, "5")
	conn := c.Conn()
	defer conn.Close()
	_, err := conn.Do("MULTI")
	require.NoError(t, err)
	_, err = conn.Do("INCR", k) // moves the key forward, queued at its new owner
	require.NoError(t, err)
	require.NoError(t, c.AbortMigration(ctx))
	s.fenceAndArm(t, c)                         // the reverse fence
	n, err := redis.Int64(c.Do(ctx, "INCR", k)) // moves the key back
	require.NoError(t, err)
	assert.Equal(t, int64(6), n)
	_, err = conn.Do("EXEC")
	require.Error(t, err, "EXEC ran at the node the key had left")
	assert.ErrorIs(t, err, shard.ErrTxAborted)
	assert.ErrorIs(t, err, shard.ErrFenceSwitched)
	v, err := redis.String(c.Do(ctx, "GET", k))
	require.NoError(t, err)
	assert.Equal(t, "6", v)
	assert.Equal(t, []string{oldOwner}, holders(t, s.servers, k), "nothing committed at the node the key left")
}
