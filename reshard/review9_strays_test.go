package reshard_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview9StraysAreNamedAsSuch: the mover leaves a stray key (on an old
// node that neither topology places it on, for example left by
// auto-eject) where it is, and the closing verification counts it as
// misplaced, so the move fails and Finish refuses. Finish said "run the
// mover again before finishing", which can never help: the report and
// the errors tell strays from keys not moved yet, and say to move or
// delete them by hand.
func TestReview9StraysAreNamedAsSuch(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	from := mustParse(t, ringURL(servers[:2], []string{"s0", "s1"}, nil))
	to := mustParse(t, ringURL(servers, []string{"s0", "s1", "s2"}, nil))
	oldRing, newRing := newClient(t, from).Router(), newClient(t, to).Router()
	var stray string
	for i := 0; stray == ""; i++ {
		k := fmt.Sprint("stray:", i)
		o, err := oldRing.Route(k)
		require.NoError(t, err)
		n, err := newRing.Route(k)
		require.NoError(t, err)
		if o.Addr != servers[0].Addr && n.Addr != servers[0].Addr {
			stray = k
		}
	}
	_, err := servers[0].Do("SET", stray, "left behind") // on s0, which places it in neither
	require.NoError(t, err)

	rep, err := reshard.Move(ctx, reshard.Options{From: from, To: to, SkipClientCheck: true})
	require.ErrorIs(t, err, reshard.ErrMisplaced)
	assert.Contains(t, err.Error(), "stray")
	assert.EqualValues(t, 1, rep.Strays)
	require.NotNil(t, rep.Verify)
	assert.EqualValues(t, 1, rep.Verify.Misplaced)
	assert.EqualValues(t, 1, rep.Verify.Strays)

	v, err := reshard.Finish(ctx, from, to)
	require.ErrorIs(t, err, reshard.ErrMisplaced)
	assert.Contains(t, err.Error(), "stray")
	assert.Contains(t, err.Error(), "by hand")
	assert.NotContains(t, err.Error(), "run the mover again")
	require.NotNil(t, v)
	assert.EqualValues(t, 1, v.Strays)

	// Verify of the migrating config counts it too.
	cfg := to
	f := from
	cfg.Migration = &shard.Migration{From: &f}
	vr, err := reshard.Verify(ctx, cfg, reshard.VerifyOptions{})
	require.NoError(t, err)
	assert.EqualValues(t, 1, vr.Misplaced)
	assert.EqualValues(t, 1, vr.Strays)

	// Once it is gone, the migration finishes.
	_, err = servers[0].Do("DEL", stray)
	require.NoError(t, err)
	_, err = reshard.Finish(ctx, from, to)
	require.NoError(t, err)
}
