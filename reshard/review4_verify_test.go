package reshard_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestVerifyOfAMigratingConfigJudgesByTheNewTopology checks Verify given
// a migrating config (the new topology with a migration block) before the
// fence is armed: processes still route by the old topology then, but
// Verify reports against the new one, counting the keys that have not
// moved yet as pending, not as placed; and once they moved and the
// migration is finished, none as misplaced.
func TestVerifyOfAMigratingConfigJudgesByTheNewTopology(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	names := []string{"s0", "s1", "s2"}
	from := mustParse(t, ringURL(servers[:2], names[:2], nil))
	to := mustParse(t, ringURL(servers, names, nil))
	const n = 500
	fill(t, from, "v", n)
	// Placed by package ring (not by the code under test), each ring built once.
	a, err := ring.New(from.RingConfig())
	require.NoError(t, err)
	b, err := ring.New(to.RingConfig())
	require.NoError(t, err)
	var moving int64
	for i := 0; i < n; i++ {
		k := fmt.Sprintf("v:%d", i)
		if a.Shards()[a.Locate(k)].Addr != b.Shards()[b.Locate(k)].Addr {
			moving++
		}
	}
	require.NotZero(t, moving)

	mig := to
	f := from
	mig.Migration = &shard.Migration{From: &f}
	rep, err := reshard.Verify(ctx, mig, reshard.VerifyOptions{})
	require.NoError(t, err)
	assert.Equal(t, int64(n), rep.Scanned)
	assert.Zero(t, rep.Misplaced)
	assert.Equal(t, moving, rep.Pending, "keys whose owner changes have not moved yet")

	// Moved and finished (no marker left: a client of the migrating
	// config would wait, routing by the old topology): every key is at
	// its owner in the new one.
	mrep, err := reshard.Move(ctx, reshard.Options{From: from, To: to, SkipClientCheck: true, Finish: true})
	require.NoError(t, err)
	require.True(t, mrep.Finished)
	rep, err = reshard.Verify(ctx, mig, reshard.VerifyOptions{})
	require.NoError(t, err)
	assert.Equal(t, int64(n), rep.Scanned)
	assert.Zero(t, rep.Misplaced, "e.g. %v", rep.Samples)
	assert.Zero(t, rep.Pending)
}
