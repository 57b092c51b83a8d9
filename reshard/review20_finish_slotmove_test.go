package reshard_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/shard"
)

// TestReview20FinishAndVerifyAfterASlotMovedInTheOldCluster: a slot of
// the old cluster moves, keys and all, to another of its masters before
// Finish and Verify run. Its keys, not moved yet, must be told as keys
// the mover moves (Finish: misplaced, no stray; Verify during the
// migration: pending), not as strays on a master the old topology does
// not place them on, as a map of the old cluster read before the slot
// moved would tell them.
func TestReview20FinishAndVerifyAfterASlotMovedInTheOldCluster(t *testing.T) {
	r := newFallbackRig(t)
	ctx := context.Background()
	require.NoError(t, r.moveSlot())

	rep, err := reshard.Finish(ctx, r.from, r.to)
	require.Error(t, err)
	assert.True(t, errors.Is(err, reshard.ErrMisplaced), "%v", err)
	require.NotNil(t, rep)
	assert.EqualValues(t, len(r.keys), rep.Misplaced, "Finish: misplaced")
	assert.Zero(t, rep.Strays, "Finish: strays (%v)", rep.Samples)

	cfg := r.to
	from := r.from
	cfg.Migration = &shard.Migration{From: &from}
	v, err := reshard.Verify(ctx, cfg, reshard.VerifyOptions{})
	require.NoError(t, err)
	assert.EqualValues(t, len(r.keys), v.Pending, "Verify: pending")
	assert.Zero(t, v.Misplaced, "Verify: misplaced (%v)", v.Samples)
	assert.Zero(t, v.Strays, "Verify: strays")
}
