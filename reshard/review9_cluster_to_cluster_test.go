package reshard_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/reshard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview9MoveFromOneClusterToAnother: a mover names its connections
// after its migration, and the arming step refuses while a mover of the
// opposite migration is connected. A cluster matches any cluster in those
// names (processes may name one by different seeds), so the mover of
// cluster A -> cluster B took its own connections for those of a mover of
// B -> A, and refused to run with ErrMoverRunning.
func TestReview9MoveFromOneClusterToAnother(t *testing.T) {
	ctx := context.Background()
	ca := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	cb := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	from, to := mustParse(t, clusterURL(ca)), mustParse(t, clusterURL(cb))
	src := newClient(t, from)
	const n = 200
	for i := range n {
		_, err := src.Do(ctx, "SET", fmt.Sprint("cc:", i), i)
		require.NoError(t, err)
	}
	rep, err := reshard.Move(ctx, reshard.Options{From: from, To: to, SkipClientCheck: true})
	require.NoError(t, err)
	assert.EqualValues(t, n, rep.Moved)
	require.NotNil(t, rep.Verify)
	assert.Zero(t, rep.Verify.Misplaced)
	dst := newClient(t, to)
	for i := range n {
		v, err := dst.Do(ctx, "GET", fmt.Sprint("cc:", i))
		require.NoError(t, err)
		assert.Equal(t, []byte(fmt.Sprint(i)), v, "cc:%d in the new cluster", i)
	}
}
