package shard_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// TestReview11FinishMigrationCutsBlockingCommandsOfTheOldTopology: a
// worker's BLPOP queue 0 planned by the old topology blocks at the queue's
// old owner. FinishMigration makes the client route by the new topology
// alone, so producers push at the new owner from then on: the BLPOP must
// not stay blocked at the old one. The fence's switch cuts such a BLPOP
// off after the read timeout, but FinishMigration during that switch (or
// before the fence went up) ended the switch without cutting anything:
// the BLPOP stayed blocked for good at the old owner while the job sat at
// the new one (and would have popped whatever an old-only process still
// pushed there). It now fails with ErrFenceSwitched, and the worker's
// next BLPOP, routed by the new topology, gets the job.
func TestReview11FinishMigrationCutsBlockingCommandsOfTheOldTopology(t *testing.T) {
	cases := []struct {
		name string
		// setup returns a migrating client with a BLPOP of k blocked
		// at k's old owner (done), where FinishMigration comes next.
		setup func(t *testing.T, s *switchSetup, k string) (*shard.Client, <-chan blpopResult)
	}{
		{"waiting", func(t *testing.T, s *switchSetup, k string) (*shard.Client, <-chan blpopResult) {
			c := s.migrating(t, nil)
			done := blockedBLPOP(t, c, k, serversByAddr(s.servers)[ringOwner(t, s.from, k)], "the BLPOP to block at the old owner")
			return c, done
		}},
		{"switch interrupted", func(t *testing.T, s *switchSetup, k string) (*shard.Client, <-chan blpopResult) {
			c := s.migrating(t, nil)
			done := blockedBLPOP(t, c, k, serversByAddr(s.servers)[ringOwner(t, s.from, k)], "the BLPOP to block at the old owner")
			switching(t, s, c)
			return c, done
		}},
		{"planned before StartMigration, switch interrupted", func(t *testing.T, s *switchSetup, k string) (*shard.Client, <-chan blpopResult) {
			c := newClient(t, s.from)
			done := blockedBLPOP(t, c, k, serversByAddr(s.servers)[ringOwner(t, s.from, k)], "the BLPOP to block at the old owner")
			require.NoError(t, c.StartMigration(context.Background(), s.to))
			switching(t, s, c)
			return c, done
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newSwitchSetup(t, 20*time.Second) // the switch would cut the BLPOP off only after 20 s
			k := s.moving(t, "review11q", 1)[0]
			c, done := tc.setup(t, s, k)
			require.NoError(t, c.FinishMigration())
			_, on := c.Migration()
			require.False(t, on)
			_, err := c.Do(context.Background(), "RPUSH", k, "job") // a producer: at the new owner
			require.NoError(t, err)
			v, err := serversByAddr(s.servers)[ringOwner(t, s.to, k)].Do("LLEN", k)
			require.NoError(t, err)
			// LLEN is 1 unless the BLPOP took the job already.
			require.Contains(t, []string{"0", "1"}, v, "the job is not at the queue's new owner")
			requireJobPopped(t, c, k, done, "the BLPOP planned by the old topology is still blocked at the old owner after FinishMigration")
		})
	}
}

// switching raises the fence and waits until c's switch waits for the
// BLPOP blocked at the old owner (the beacons do not acknowledge yet).
func switching(t *testing.T, s *switchSetup, c *shard.Client) {
	t.Helper()
	s.mark(t, c, shard.PhaseFenced)
	waitFor(t, 10*time.Second, "the client to switch", func() bool {
		i, _ := c.Migration()
		return i.Phase == shard.PhaseFenced
	})
	require.False(t, s.beaconSays(shard.PhaseFenced), "the switch acknowledged with the BLPOP still blocked")
}

// TestReview11FinishMigrationLeavesABlockingCommandWhoseKeyStays: the
// cut of FinishMigration ends only the blocking commands whose keys the
// client now routes elsewhere: a worker's BLPOP on a queue whose owner is
// the same in both topologies is served where it waits, with no error.
func TestReview11FinishMigrationLeavesABlockingCommandWhoseKeyStays(t *testing.T) {
	s := newSwitchSetup(t, 20*time.Second)
	var k string
	for i := 0; k == ""; i++ {
		if c := fmt.Sprintf("review11s:%d", i); ringOwner(t, s.from, c) == ringOwner(t, s.to, c) {
			k = c
		}
	}
	c := s.migrating(t, nil)
	done := blockedBLPOP(t, c, k, serversByAddr(s.servers)[ringOwner(t, s.from, k)], "the BLPOP to block at the queue's owner")
	switching(t, s, c)
	require.NoError(t, c.FinishMigration())
	popJob(t, c, k, done)
}
