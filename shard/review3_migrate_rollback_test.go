package shard_test

import (
	"context"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview3RollbackFailsACallerHeldBeforeSendingAcrossTheTurn: an INCR
// planned while the forward migration was armed (by the new topology) and
// held before sending (descheduled, say) for longer than the rollback's
// switch waits: the switch stops waiting, the reverse fence is armed and
// the key moves back to its old owner. Sent then at the forward new owner,
// the INCR started a fresh counter there, which every later read misses.
// As for a command planned by the old topology of a forward switch, it
// must fail with ErrFenceSwitched without sending anything (or be seen).
func TestReview3RollbackFailsACallerHeldBeforeSendingAcrossTheTurn(t *testing.T) {
	ctx := context.Background()
	s := newSwitchSetup(t, 300*time.Millisecond)
	s.from.Pool.DialTimeout, s.to.Pool.DialTimeout = 300*time.Millisecond, 300*time.Millisecond
	s.from.Pool.WriteTimeout, s.to.Pool.WriteTimeout = 300*time.Millisecond, 300*time.Millisecond
	gate := newHoldGate()
	gate.holdPlanned(t, "INCR")
	c := s.migrating(t, nil)
	s.fenceAndArm(t, c)
	k := s.moving(t, "r3rb", 1)[0]
	_, err := c.Do(ctx, "SET", k, 10) // at its new owner
	require.NoError(t, err)
	done := gate.hold(t, func() error {
		_, err := c.Do(ctx, "INCR", k)
		return err
	})
	require.NoError(t, c.AbortMigration(ctx))
	s.fenceAndArm(t, c)                       // the reverse fence: its switch gives up waiting for the held INCR
	n, err := redis.Int(c.Do(ctx, "INCR", k)) // moves the key back to its old owner
	require.NoError(t, err)
	require.Equal(t, 11, n)
	close(gate.release)
	requireHeldIncrCounted(t, c, k, done)
	assert.Equal(t, []string{ringOwner(t, s.from, k)}, holders(t, s.servers, k), "the key sits at its old owner alone")
}
