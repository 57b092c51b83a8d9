package shard_test

import (
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview10ConnRunStartHookOutsideTheFence: a Conn's transaction
// planned by the old topology counts in the migration fence only for
// each round trip, which must begin before the switch. Its run's Start
// hook ran inside that count, before anything was written: a slow hook
// kept the switch waiting until it gave up, and the run then wrote at
// the old owner after the switch (a write that the new topology does
// not see). The hook runs before the run enters the fence; a run held
// there across the switch is refused, nothing written.
func TestReview10ConnRunStartHookOutsideTheFence(t *testing.T) {
	s := newSwitchSetup(t, 300*time.Millisecond)
	gate := newHoldGate()
	c := s.migrating(t, gate.startHooks("MULTI"))
	k := s.moving(t, "r10crf", 1)[0]

	conn := c.Conn()
	defer conn.Close()
	_, err := conn.Do("WATCH", k) // planned by the old topology
	require.NoError(t, err)
	acked, done := s.fenceWhileHeld(t, c, gate, func() error {
		err := conn.Send("MULTI")
		if err == nil {
			err = conn.Send("SET", k, "late")
		}
		if err == nil {
			_, err = redis.Values(conn.Do("EXEC"))
		}
		return err
	})
	require.ErrorIs(t, heldResult(t, done), shard.ErrFenceSwitched)
	assert.Empty(t, holders(t, s.servers, k), "nothing written after the switch")
	assert.True(t, acked, "the switch went on while the run's Start hook was held")
}
