package shard_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview2StartMigrationCutsABlockingCommandPlannedBefore: a worker's
// BLPOP queue 0, sent before the process called StartMigration, blocks at
// the queue's old owner. Once the fence is up, producers push to the
// queue at its new owner, so the worker must not stay blocked at the old
// one: its BLPOP is cut off by the switch, as one planned by the old
// topology during the wait is (an error matching ErrFenceSwitched, after
// which the worker's next BLPOP goes to the new owner), or it returns the
// pushed element. Fails when the BLPOP stays blocked for good.
func TestReview2StartMigrationCutsABlockingCommandPlannedBefore(t *testing.T) {
	ctx := context.Background()
	s := newSwitchSetup(t, 2*time.Second)
	c := newClient(t, s.from)
	k := s.moving(t, "queue", 1)[0]
	oldOwner := ringOwner(t, s.from, k)
	type result struct {
		v   []string
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := redis.Strings(c.Do(ctx, "BLPOP", k, 0))
		done <- result{v, err}
	}()
	srvs := serversByAddr(s.servers)
	waitFor(t, 20*time.Second, "the BLPOP to block at the old owner", func() bool {
		info, err := srvs[oldOwner].Do("INFO", "clients")
		return err == nil && strings.Contains(info, "blocked_clients:1")
	})
	require.NoError(t, c.StartMigration(ctx, s.to))
	s.fenceAndArm(t, c)
	_, err := c.Do(ctx, "RPUSH", k, "job") // a producer: the queue moves to its new owner
	require.NoError(t, err)
	select {
	case r := <-done:
		if r.err != nil {
			assert.True(t, errors.Is(r.err, shard.ErrFenceSwitched), "%v", r.err)
			v, err := redis.Strings(c.Do(ctx, "BLPOP", k, 0)) // the worker's next BLPOP
			require.NoError(t, err)
			assert.Equal(t, []string{k, "job"}, v)
		} else {
			assert.Equal(t, []string{k, "job"}, r.v)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the BLPOP sent before StartMigration is still blocked at the old owner, while the queue moved")
	}
}

// TestReview2RollbackCutsABlockingCommandPlannedBeforeTheTurn: the same
// for a rollback: a BLPOP queue 0 sent while the forward migration was
// armed blocks at the queue's new owner; once the client turned around
// and the reverse fence is up, producers push at the old owner, so the
// BLPOP must not stay blocked where it is.
func TestReview2RollbackCutsABlockingCommandPlannedBeforeTheTurn(t *testing.T) {
	ctx := context.Background()
	s := newSwitchSetup(t, 2*time.Second)
	c := s.migrating(t, nil)
	s.fenceAndArm(t, c)
	k := s.moving(t, "rqueue", 1)[0]
	newOwner := ringOwner(t, s.to, k)
	type result struct {
		v   []string
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := redis.Strings(c.Do(ctx, "BLPOP", k, 0))
		done <- result{v, err}
	}()
	srvs := serversByAddr(s.servers)
	waitFor(t, 20*time.Second, "the BLPOP to block at the new owner", func() bool {
		info, err := srvs[newOwner].Do("INFO", "clients")
		return err == nil && strings.Contains(info, "blocked_clients:1")
	})
	require.NoError(t, c.AbortMigration(ctx))
	s.fenceAndArm(t, c)                    // the reverse fence
	_, err := c.Do(ctx, "RPUSH", k, "job") // a producer, at the queue's old owner again
	require.NoError(t, err)
	select {
	case r := <-done:
		if r.err != nil {
			assert.True(t, errors.Is(r.err, shard.ErrFenceSwitched), "%v", r.err)
			v, err := redis.Strings(c.Do(ctx, "BLPOP", k, 0))
			require.NoError(t, err)
			assert.Equal(t, []string{k, "job"}, v)
		} else {
			assert.Equal(t, []string{k, "job"}, r.v)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the BLPOP planned before the turn is still blocked at the node the queue left")
	}
}
