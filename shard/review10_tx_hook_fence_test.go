package shard_test

import (
	"context"
	"testing"
	"time"

	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// TestReview10TxCommandHookOutsideTheFence: a Client.Tx planned by the
// old topology counts in the migration fence only during each of its
// round trips. The Command hook of a WATCH or Tx.Do ran inside that
// count, after the reply came: a slow hook held the switch of the
// migration (for every client process of the deployment) for as long as
// it ran, up to the switch's bound. The hook runs once the round trip
// left the fence, as the MULTI ... EXEC batch's Pipeline hook does.
func TestReview10TxCommandHookOutsideTheFence(t *testing.T) {
	// A long read timeout: the switch would wait for a held caller for
	// tens of seconds before it gave up.
	s := newSwitchSetup(t, 20*time.Second)
	gate := newHoldGate()
	c := s.migrating(t, gate.commandHooks("GET"))
	k := s.moving(t, "r10txf", 1)[0]
	ctx := context.Background()

	acked, done := s.fenceWhileHeld(t, c, gate, func() error {
		_, err := c.Tx(ctx, []string{k}, func(tx *shard.Tx) error {
			_, err := tx.Do("GET", k)
			return err
		})
		return err
	})
	if acked {
		s.mark(t, c, shard.PhaseArmed) // the transaction, refused at MULTI, runs again by the new topology
	}
	err := heldResult(t, done)
	require.True(t, acked, "the switch waited for a Command hook that ran after its command's reply")
	require.NoError(t, err, "the transaction, run again by the new topology")
}
