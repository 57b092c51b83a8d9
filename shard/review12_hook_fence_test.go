package shard_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// slowStart is a Start hook that, once armed, sleeps for d in the next
// operation named name, and says when it began to.
type slowStart struct {
	name    string
	d       time.Duration
	armed   atomic.Bool
	started chan struct{}
}

func newSlowStart(name string, d time.Duration) *slowStart {
	return &slowStart{name: name, d: d, started: make(chan struct{})}
}

func (s *slowStart) hooks() *shard.Hooks {
	return &shard.Hooks{Start: func(ctx context.Context, op *shard.Op) context.Context {
		if op.Name == s.name && s.armed.CompareAndSwap(true, false) {
			close(s.started)
			time.Sleep(s.d) // a tracing exporter that stalls: it ignores ctx
		}
		return ctx
	}}
}

// run arms the hook, runs call on a goroutine and returns once call is in
// the hook, with the channel its error comes on.
func (s *slowStart) run(t *testing.T, call func() error) <-chan error {
	t.Helper()
	s.armed.Store(true)
	done := make(chan error, 1)
	go func() { done <- call() }()
	select {
	case <-s.started:
	case err := <-done:
		t.Fatalf("the call ended without reaching the hook: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the call did not reach the hook")
	}
	return done
}

// TestReview12SlowStartHookDoesNotHoldTheSwitch: a Do's Start hook ran
// after the command was planned and counted by the migration's fence (by
// the old topology while the migration waited, or by the new one of a
// migration a rollback may turn around). A Start hook that took 2s (a
// tracing exporter that stalls) kept the switch waiting for 2s:
// ArmMigration (and, in a deployment, the fenced beacons every process's
// mover waits for, while commands on moving keys wait at the fence) took
// the hook's time. The hook now runs outside the count; the command is
// planned again when the switch came meanwhile.
func TestReview12SlowStartHookDoesNotHoldTheSwitch(t *testing.T) {
	const hookTime = 2 * time.Second
	t.Run("forward", func(t *testing.T) {
		ctx := context.Background()
		s := newSwitchSetup(t, 3*time.Second)
		slow := newSlowStart("SET", hookTime)
		c := s.migrating(t, slow.hooks())
		k := s.moving(t, "r12sf", 1)[0]
		done := slow.run(t, func() error {
			_, err := c.Do(ctx, "SET", k, "v")
			return err
		})
		begin := time.Now()
		require.NoError(t, c.ArmMigration())
		took := time.Since(begin)
		assert.Less(t, took, hookTime/2, "ArmMigration waited for a Start hook")
		select {
		case err := <-done:
			require.NoError(t, err, "the SET whose Start hook was slow")
		case <-time.After(30 * time.Second):
			t.Fatal("the SET never returned")
		}
		v, err := redis.String(c.Do(ctx, "GET", k))
		require.NoError(t, err)
		assert.Equal(t, "v", v)
		assert.Equal(t, []string{ringOwner(t, s.to, k)}, holders(t, s.servers, k), "written at the new owner alone")
	})
	t.Run("rollback", func(t *testing.T) {
		ctx := context.Background()
		s := newSwitchSetup(t, 3*time.Second)
		slow := newSlowStart("INCR", hookTime)
		c := s.migrating(t, slow.hooks())
		s.fenceAndArm(t, c)
		k := s.moving(t, "r12sr", 1)[0]
		_, err := c.Do(ctx, "SET", k, 10) // at its new owner
		require.NoError(t, err)
		done := slow.run(t, func() error {
			_, err := c.Do(ctx, "INCR", k) // planned by the new topology
			return err
		})
		begin := time.Now()
		require.NoError(t, c.AbortMigration(ctx))
		require.NoError(t, c.ArmMigration()) // the rollback's switch
		took := time.Since(begin)
		assert.Less(t, took, hookTime/2, "the rollback's switch waited for a Start hook")
		// Another caller's command on a moving key is not held either.
		k2 := s.moving(t, "r12sr2", 1)[0]
		begin = time.Now()
		_, err = c.Do(ctx, "SET", k2, "w")
		require.NoError(t, err)
		assert.Less(t, time.Since(begin), hookTime/2)
		var heldErr error
		select {
		case heldErr = <-done:
		case <-time.After(30 * time.Second):
			t.Fatal("the INCR never returned")
		}
		want := 11
		if heldErr != nil {
			require.ErrorIs(t, heldErr, shard.ErrFenceSwitched)
			want = 10
		}
		n, err := redis.Int(c.Do(ctx, "GET", k))
		require.NoError(t, err)
		assert.Equal(t, want, n, "the INCR (error %v)", heldErr)
		assert.Equal(t, []string{ringOwner(t, s.from, k)}, holders(t, s.servers, k), "back at its old owner alone")
	})
}

// TestReview12SlowCommandHookDoesNotHoldTheRollback: the Command and
// Pipeline hooks of a command planned by a migration's old topology run
// once it left the fence's count, but those of a command planned by the
// new topology of a migration that a rollback may turn around ran inside
// its count: a Command hook that took 2s made the rollback's switch
// (ArmMigration after AbortMigration) take 2s.
func TestReview12SlowCommandHookDoesNotHoldTheRollback(t *testing.T) {
	const hookTime = 2 * time.Second
	for _, name := range []string{"Do", "Pipeline"} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := newSwitchSetup(t, 3*time.Second)
			var armed atomic.Bool
			started := make(chan struct{})
			slow := func() {
				if armed.CompareAndSwap(true, false) {
					close(started)
					time.Sleep(hookTime)
				}
			}
			c := s.migrating(t, &shard.Hooks{
				Command: func(_ context.Context, ev *shard.CommandEvent) {
					if ev.Name == "INCR" {
						slow()
					}
				},
				Pipeline: func(context.Context, *shard.PipelineEvent) { slow() },
			})
			s.fenceAndArm(t, c)
			k := s.moving(t, "r12ch"+name, 1)[0]
			_, err := c.Do(ctx, "SET", k, 10) // at its new owner
			require.NoError(t, err)
			armed.Store(true)
			done := make(chan error, 1)
			go func() {
				if name == "Do" {
					_, err := c.Do(ctx, "INCR", k)
					done <- err
					return
				}
				p := c.Pipeline()
				p.Send("INCR", k)
				p.Send("GET", k)
				res, err := p.Exec(ctx)
				if err == nil && len(res) == 2 {
					err = res[0].Err
				}
				done <- err
			}()
			select {
			case <-started:
			case err := <-done:
				t.Fatalf("the INCR ended without reaching its hook: %v", err)
			case <-time.After(30 * time.Second):
				t.Fatal("the INCR did not reach its hook")
			}
			begin := time.Now()
			require.NoError(t, c.AbortMigration(ctx))
			require.NoError(t, c.ArmMigration()) // the rollback's switch
			assert.Less(t, time.Since(begin), hookTime/2, "the rollback's switch waited for a hook")
			select {
			case err := <-done:
				require.NoError(t, err, "the INCR, run before the switch")
			case <-time.After(30 * time.Second):
				t.Fatal("the INCR never returned")
			}
			n, err := redis.Int(c.Do(ctx, "GETEX", k)) // a write that changes nothing: moves the key back
			require.NoError(t, err)
			assert.Equal(t, 11, n)
			assert.Equal(t, []string{ringOwner(t, s.from, k)}, holders(t, s.servers, k), "back at its old owner alone")
		})
	}
}
