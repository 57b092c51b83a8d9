package shard_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
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
	done := blockedBLPOP(t, c, k, serversByAddr(s.servers)[oldOwner], "the BLPOP to block at the old owner")
	require.NoError(t, c.StartMigration(ctx, s.to))
	s.fenceAndArm(t, c)
	_, err := c.Do(ctx, "RPUSH", k, "job") // a producer: the queue moves to its new owner
	require.NoError(t, err)
	requireJobPopped(t, c, k, done, "the BLPOP sent before StartMigration is still blocked at the old owner, while the queue moved")
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
	done := blockedBLPOP(t, c, k, serversByAddr(s.servers)[newOwner], "the BLPOP to block at the new owner")
	require.NoError(t, c.AbortMigration(ctx))
	s.fenceAndArm(t, c)                    // the reverse fence
	_, err := c.Do(ctx, "RPUSH", k, "job") // a producer, at the queue's old owner again
	require.NoError(t, err)
	requireJobPopped(t, c, k, done, "the BLPOP planned before the turn is still blocked at the node the queue left")
}

// blpopResult is what a BLPOP returned.
type blpopResult struct {
	v   []string
	err error
}

// blockedBLPOP sends BLPOP k 0 (a worker waiting for a job) through c and
// waits until server, where it should block, says a client is blocked
// (what names the wait); the channel receives what the BLPOP returns.
func blockedBLPOP(t *testing.T, c *shard.Client, k string, server *redistest.Server, what string) <-chan blpopResult {
	t.Helper()
	done := make(chan blpopResult, 1)
	go func() {
		v, err := redis.Strings(c.Do(context.Background(), "BLPOP", k, 0))
		done <- blpopResult{v, err}
	}()
	waitFor(t, 20*time.Second, what, func() bool {
		info, err := server.Do("INFO", "clients")
		return err == nil && strings.Contains(info, "blocked_clients:1")
	})
	return done
}

// requireJobPopped checks, once "job" was pushed to k, that the blocked
// BLPOP either returned it or was cut off by the fence's switch
// (ErrFenceSwitched), the worker's next BLPOP then returning it; stuck
// says what it means that it did neither within 30s.
func requireJobPopped(t *testing.T, c *shard.Client, k string, done <-chan blpopResult, stuck string) {
	t.Helper()
	ctx := context.Background()
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
		t.Fatal(stuck)
	}
}
