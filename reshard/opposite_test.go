package reshard_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/reshard"
)

// TestRollbackWaitsForTheForwardMover: while the mover of A -> B runs,
// arming the rollback B -> A is refused (its mover would race the
// forward one and move keys forward again after they were moved back),
// naming the forward mover's connections; once that mover has stopped,
// the rollback arms.
func TestRollbackWaitsForTheForwardMover(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	a := mustParse(t, ringURL(servers[:2], []string{"s0", "s1"}, nil))
	b := mustParse(t, ringURL(servers, []string{"s0", "s1", "s2"}, nil))
	fill(t, a, "opp", 3000)

	mctx, stop := context.WithCancel(ctx)
	defer stop()
	moving := make(chan struct{})
	forward := make(chan error, 1)
	go func() {
		var once bool
		_, err := reshard.Move(mctx, reshard.Options{From: a, To: b, SkipClientCheck: true, KeysPerSecond: 200, Batch: 10,
			Progress: func(p reshard.Progress) {
				if p.Moved > 0 && !once {
					once = true
					close(moving)
				}
			}})
		forward <- err
	}()
	select {
	case <-moving:
	case err := <-forward:
		t.Fatalf("the forward mover ended before it moved anything: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the forward mover moved nothing in 30 s")
	}

	err := reshard.Arm(ctx, b, a, reshard.ArmOptions{SkipClientCheck: true})
	require.Error(t, err, "the rollback armed while the forward mover ran")
	assert.True(t, errors.Is(err, reshard.ErrMoverRunning), "%v", err)
	assert.Contains(t, err.Error(), "shardis-reshard:")
	// The rollback's marker would sit on all of B's nodes, beside the
	// forward one on A's (servers 0 and 1).
	for i, s := range servers {
		n, err := s.Do("EVAL", "return #redis.call('KEYS', 'shardis:migration:*')", "0")
		require.NoError(t, err)
		want := "1"
		if i == 2 {
			want = "0"
		}
		assert.Equal(t, want, n, "markers on %s: the rollback's fence was not raised", s.Addr)
	}

	stop()
	require.ErrorIs(t, <-forward, context.Canceled)
	require.NoError(t, reshard.Arm(ctx, b, a, reshard.ArmOptions{SkipClientCheck: true}), "the forward mover has stopped")
	require.NoError(t, reshard.ClearFence(ctx, b, a))
	require.NoError(t, reshard.ClearFence(ctx, a, b))
}
