package shard_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview3StartMigrationFencesACommandPlannedBefore: an INCR planned
// before the process called StartMigration (by the old topology, as no
// migration was on) and held before sending (a slow hook) across the
// fence's switch and arming must not then run at the key's old owner: by
// then the key has moved, and the INCR would start a fresh counter there,
// which every later read misses (a lost increment) and the next move
// deletes. The switch counts it as planned by the old topology: it fails
// with ErrFenceSwitched, nothing sent, or its increment is seen.
func TestReview3StartMigrationFencesACommandPlannedBefore(t *testing.T) {
	ctx := context.Background()
	s := newSwitchSetup(t, 500*time.Millisecond)
	gate := newHoldGate()
	cfg := s.from
	cfg.Hooks = gate.startHooks("INCR")
	c := newClient(t, cfg)
	k := s.moving(t, "r3before", 1)[0]
	_, err := c.Do(ctx, "SET", k, 10)
	require.NoError(t, err)
	done := gate.hold(t, func() error {
		_, err := c.Do(ctx, "INCR", k)
		return err
	})
	require.NoError(t, c.StartMigration(ctx, s.to))
	s.fenceAndArm(t, c)
	n, err := redis.Int(c.Do(ctx, "INCR", k)) // moves the key to its new owner
	require.NoError(t, err)
	require.Equal(t, 11, n)
	close(gate.release)
	requireHeldIncrCounted(t, c, k, done)
	assert.Equal(t, []string{ringOwner(t, s.to, k)}, holders(t, s.servers, k), "the key sits at its new owner alone")
}

// TestReview3StartMigrationRefusesATransactionPlannedBefore: the same for
// Client.Tx. A transaction planned before StartMigration picked the old
// owner of its keys; its fn, still running across the fence's switch and
// arming, queues an INCR of a key of the same hash tag that is not watched
// and that another command moved meanwhile. EXEC at the old owner then
// started a fresh counter there. Each round trip after the switch must be
// refused (ErrFenceSwitched, nothing of it ran), and Client.Tx runs the
// transaction again by the new topology: every increment counts.
func TestReview3StartMigrationRefusesATransactionPlannedBefore(t *testing.T) {
	ctx := context.Background()
	s := newSwitchSetup(t, 500*time.Millisecond)
	c := newClient(t, s.from)
	// A hash tag whose owner changes.
	var watched, counter string
	for i := 0; ; i++ {
		require.Less(t, i, 10000, "no moving tag")
		tag := fmt.Sprintf("{r3tx%d}", i)
		if ringOwner(t, s.from, tag) != ringOwner(t, s.to, tag) {
			watched, counter = tag+"w", tag+"n"
			break
		}
	}
	_, err := c.Do(ctx, "SET", counter, 10)
	require.NoError(t, err)
	held, release := make(chan struct{}), make(chan struct{})
	var first atomic.Bool
	first.Store(true)
	type result struct {
		replies []any
		err     error
	}
	done := make(chan result, 1)
	go func() {
		replies, err := c.Tx(ctx, []string{watched}, func(tx *shard.Tx) error {
			if first.CompareAndSwap(true, false) {
				close(held)
				<-release
			}
			return tx.Queue("INCR", counter)
		})
		done <- result{replies, err}
	}()
	<-held
	require.NoError(t, c.StartMigration(ctx, s.to))
	s.fenceAndArm(t, c)
	n, err := redis.Int(c.Do(ctx, "INCR", counter)) // moves the counter to its new owner
	require.NoError(t, err)
	require.Equal(t, 11, n)
	close(release)
	var r result
	select {
	case r = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the held transaction never returned")
	}
	want := 12
	if r.err != nil {
		assert.True(t, errors.Is(r.err, shard.ErrFenceSwitched), "%v", r.err)
		want = 11
	} else {
		require.Len(t, r.replies, 1)
		assert.Equal(t, int64(12), r.replies[0], "the transaction's INCR started a fresh counter")
	}
	got, err := redis.Int(c.Do(ctx, "GET", counter))
	require.NoError(t, err)
	assert.Equal(t, want, got, "the transaction's increment (error %v) was lost", r.err)
	assert.Equal(t, []string{ringOwner(t, s.to, counter)}, holders(t, s.servers, counter), "the counter sits at its new owner alone")
}

// TestReview3StartMigrationRefusesAConnTransactionPlannedBefore: the same
// for a Conn's MULTI ... EXEC: an INCR queued at the old owner before
// StartMigration must not be committed there by an EXEC sent after the
// switch and arming (the counter moved meanwhile): EXEC fails with
// ErrFenceSwitched, nothing ran, and the retry goes to the new owner.
func TestReview3StartMigrationRefusesAConnTransactionPlannedBefore(t *testing.T) {
	ctx := context.Background()
	s := newSwitchSetup(t, 500*time.Millisecond)
	c := newClient(t, s.from)
	counter := s.moving(t, "r3conn", 1)[0]
	_, err := c.Do(ctx, "SET", counter, 10)
	require.NoError(t, err)
	conn := c.Conn()
	defer conn.Close()
	_, err = conn.Do("MULTI")
	require.NoError(t, err)
	_, err = conn.Do("INCR", counter)
	require.NoError(t, err)
	require.NoError(t, c.StartMigration(ctx, s.to))
	s.fenceAndArm(t, c)
	n, err := redis.Int(c.Do(ctx, "INCR", counter)) // moves the counter to its new owner
	require.NoError(t, err)
	require.Equal(t, 11, n)
	want := 12
	reply, err := conn.Do("EXEC")
	if err != nil {
		assert.True(t, errors.Is(err, shard.ErrFenceSwitched), "%v", err)
		want = 11
	} else {
		vs, verr := redis.Values(reply, nil)
		require.NoError(t, verr)
		require.Len(t, vs, 1)
		assert.Equal(t, int64(12), vs[0], "EXEC's INCR started a fresh counter at the old owner")
	}
	got, err := redis.Int(c.Do(ctx, "GET", counter))
	require.NoError(t, err)
	assert.Equal(t, want, got, "the transaction's increment (error %v) was lost", err)
	assert.Equal(t, []string{ringOwner(t, s.to, counter)}, holders(t, s.servers, counter), "the counter sits at its new owner alone")
}

// requireHeldIncrCounted waits for the held INCR of k (released, its
// error on done) and checks that it either failed with ErrFenceSwitched,
// nothing sent, or counted: k, at 11 after the test's own INCR, must then
// be 12.
func requireHeldIncrCounted(t *testing.T, c *shard.Client, k string, done <-chan error) {
	t.Helper()
	ctx := context.Background()
	var heldErr error
	select {
	case heldErr = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the held INCR never returned")
	}
	want := 12
	if heldErr != nil {
		assert.True(t, errors.Is(heldErr, shard.ErrFenceSwitched), "%v", heldErr)
		want = 11
	}
	got, err := redis.Int(c.Do(ctx, "GET", k))
	require.NoError(t, err)
	assert.Equal(t, want, got, "the held INCR (error %v) was lost", heldErr)
}
