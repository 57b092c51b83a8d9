package shard_test

import (
	"context"
	"errors"
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
	var hold atomic.Bool
	held, release := make(chan struct{}), make(chan struct{})
	cfg := s.from
	cfg.Hooks = &shard.Hooks{Start: func(ctx context.Context, op *shard.Op) context.Context {
		if op.Name == "INCR" && hold.CompareAndSwap(true, false) {
			close(held)
			<-release
		}
		return ctx
	}}
	c := newClient(t, cfg)
	k := s.moving(t, "r3before", 1)[0]
	_, err := c.Do(ctx, "SET", k, 10)
	require.NoError(t, err)
	hold.Store(true)
	done := make(chan error, 1)
	go func() {
		_, err := c.Do(ctx, "INCR", k)
		done <- err
	}()
	<-held
	require.NoError(t, c.StartMigration(ctx, s.to))
	s.fenceAndArm(t, c)
	n, err := redis.Int(c.Do(ctx, "INCR", k)) // moves the key to its new owner
	require.NoError(t, err)
	require.Equal(t, 11, n)
	close(release)
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
	assert.Equal(t, []string{ringOwner(t, s.to, k)}, holders(t, s.servers, k), "the key sits at its new owner alone")
}
