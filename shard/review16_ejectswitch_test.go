package shard_test

import (
	"context"
	"sync"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An operator's Eject or Restore of a shard, made on the ring router the
// client routes by while a migration switches the client to another ring
// router (the fence's switch, FinishMigration), holds once both are done:
// the router the client routes by afterwards has the shard out after an
// Eject and in after a Restore, whichever came first. The shard (index 1)
// has the same address in both topologies.
func TestReview16HandEjectionRacingSwitchHolds(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 4, redistest.Options{})
	three, four := ringConfig(servers[:3]), ringConfig(servers)
	c := newClient(t, three)

	rounds := 300
	if testing.Short() {
		rounds = 100
	}
	lost := 0
	for i := range rounds {
		to := four
		if i%2 == 1 {
			to = three
		}
		want := i%4 < 2 // Eject twice, then Restore twice
		rr := currentRingRouter(t, c)
		// Start from the other state, so the racing call changes it.
		if want {
			require.NoError(t, rr.Restore(1))
		} else {
			require.NoError(t, rr.Eject(1))
		}
		armed := i%3 == 0
		require.NoError(t, c.StartMigration(ctx, to))

		var wg sync.WaitGroup
		start := make(chan struct{})
		var opErr, switchErr error
		wg.Add(2)
		go func() {
			defer wg.Done()
			<-start
			r, _ := c.Router().(*shard.RingRouter)
			if r == nil {
				return // reported below: the router is checked again
			}
			if want {
				opErr = r.Eject(1)
			} else {
				opErr = r.Restore(1)
			}
		}()
		go func() {
			defer wg.Done()
			<-start
			if armed {
				switchErr = c.ArmMigration()
			} else {
				switchErr = c.FinishMigration()
			}
		}()
		close(start)
		wg.Wait()
		require.NoError(t, opErr)
		require.NoError(t, switchErr)
		if armed {
			require.NoError(t, c.FinishMigration())
		}
		if got := currentRingRouter(t, c).Ejected(1); got != want {
			lost++
			t.Logf("round %d (armed=%v): shard 1 ejected=%v after the switch, want %v", i, armed, got, want)
		}
	}
	assert.Zero(t, lost, "an Eject or Restore racing the switch was lost in %d of %d rounds", lost, rounds)
}
