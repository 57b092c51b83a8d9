package shard_test

import (
	"context"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// popJob pushes "job" to k through c and checks that the BLPOP behind done,
// which was not cut off, returns it.
func popJob(t *testing.T, c *shard.Client, k string, done <-chan blpopResult) {
	t.Helper()
	_, err := c.Do(context.Background(), "RPUSH", k, "job")
	require.NoError(t, err)
	select {
	case r := <-done:
		require.NoError(t, r.err, "the BLPOP planned by the topology the client still routes by")
		assert.Equal(t, []string{k, "job"}, r.v)
	case <-time.After(30 * time.Second):
		t.Fatal("the BLPOP is still blocked at the node where its queue is")
	}
}

// TestReview10StartMigrationArmedEndsWithItsContext: StartMigration with
// Migration.Armed switches at once, and the switch waits for what was
// planned by the old topology — here a worker's BLPOP queue 0 — until it
// cuts it off after the read timeout, and the others for a dial, write
// and read timeout more (14 s with the defaults). It did so whatever the
// caller's context said: a StartMigration whose context ended after
// 300 ms returned 20 s later, with the migration on. It now returns once
// its context ends, with an error matching ErrMigration and the
// context's, and no migration on: the client routes by the old topology
// as before (nothing had moved), the BLPOP goes on at the queue's owner
// and is served there, and a later StartMigration works.
func TestReview10StartMigrationArmedEndsWithItsContext(t *testing.T) {
	s := newSwitchSetup(t, 20*time.Second)
	c := newClient(t, s.from)
	keys := s.moving(t, "review10q", 2)
	k, other := keys[0], keys[1]
	oldOwner := ringOwner(t, s.from, k)
	done := blockedBLPOP(t, c, k, serversByAddr(s.servers)[oldOwner], "the BLPOP to block at the old owner")

	to := s.to
	to.Migration = &shard.Migration{Armed: true}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := c.StartMigration(ctx, to)
	took := time.Since(start)
	require.Error(t, err, "StartMigration whose context ended while its switch waited")
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.ErrorIs(t, err, shard.ErrMigration)
	assert.Less(t, took, 10*time.Second, "StartMigration outlived its context")
	_, on := c.Migration()
	require.False(t, on, "StartMigration failed, but a migration is on")

	// Still routed by the old topology: the BLPOP was left alone, and a
	// key written now is at its old owner.
	popJob(t, c, k, done)
	_, err = c.Do(context.Background(), "SET", other, "v1")
	require.NoError(t, err)
	v, err := serversByAddr(s.servers)[ringOwner(t, s.from, other)].Do("GET", other)
	require.NoError(t, err)
	assert.Equal(t, "v1", v, "a write after the failed StartMigration did not go to the old owner")

	// And the migration can start again.
	require.NoError(t, c.StartMigration(context.Background(), to))
	info, on := c.Migration()
	require.True(t, on)
	assert.Equal(t, shard.PhaseArmed, info.Phase)
	n, err := redis.Int(c.Do(context.Background(), "APPEND", other, "+")) // a write moves the key first
	require.NoError(t, err)
	assert.Equal(t, 3, n)
	v, err = serversByAddr(s.servers)[ringOwner(t, s.to, other)].Do("GET", other)
	require.NoError(t, err)
	assert.Equal(t, "v1+", v, "the key did not move to its new owner")
}

// TestReview10AbortMigrationDuringTheSwitchEndsPromptly: the fence's
// switch runs in the background loop of the beacons; AbortMigration (and
// FinishMigration) close the beacons and waited for that loop, so one
// called while the switch waited for a command planned by the old
// topology (a BLPOP queue 0) waited with it, up to the read timeout
// (20 s here), whatever its context said, and the BLPOP was then cut off
// although the client was going back to the topology it was blocked in.
// The switch now stops when the beacons close: AbortMigration returns at
// once, routes by the old topology, and the BLPOP is served there.
func TestReview10AbortMigrationDuringTheSwitchEndsPromptly(t *testing.T) {
	s := newSwitchSetup(t, 20*time.Second)
	c := s.migrating(t, nil)
	k := s.moving(t, "review10r", 1)[0]
	oldOwner := ringOwner(t, s.from, k)
	done := blockedBLPOP(t, c, k, serversByAddr(s.servers)[oldOwner], "the BLPOP to block at the old owner")
	s.mark(t, c, shard.PhaseFenced)
	waitFor(t, 10*time.Second, "the client to switch", func() bool {
		i, _ := c.Migration()
		return i.Phase == shard.PhaseFenced
	})
	require.False(t, s.beaconSays(shard.PhaseFenced), "the switch acknowledged with the BLPOP still blocked")

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	require.NoError(t, c.AbortMigration(ctx))
	assert.Less(t, time.Since(start), 10*time.Second, "AbortMigration waited for the switch it ends")
	_, on := c.Migration()
	require.False(t, on)
	popJob(t, c, k, done)
}
