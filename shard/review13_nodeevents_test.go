package shard_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// TestReview13SlowNodeDownHookDoesNotHoldUpAnsweredCommands: a command
// sent to a node before it was marked down is answered while the
// NodeState hook still runs for its NodeDown. Its caller must get the
// reply then, not once the hook has returned: the hook was called with
// the node's state lock held, which the success of that command waits
// for. The NodeUp it causes comes after the NodeDown, once the hook
// returned.
func TestReview13SlowNodeDownHookDoesNotHoldUpAnsweredCommands(t *testing.T) {
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	cfg := ringConfig(servers)
	cfg.DisableAutoPipeline = true
	cfg.Pool.ReadTimeout = 10 * time.Second
	cfg.Health = shard.HealthOptions{Interval: 100 * time.Millisecond, FailureLimit: 1, Timeout: 200 * time.Millisecond}
	slow := servers[0]
	downSeen := make(chan struct{})
	release := make(chan struct{}) // closed once the GET returned (or the test gave up)
	var releaseOnce, downOnce sync.Once
	var mu sync.Mutex
	var events []string
	cfg.Hooks = &shard.Hooks{NodeState: func(ev shard.NodeEvent) {
		mu.Lock()
		events = append(events, ev.Node.Addr+" "+ev.Kind.String())
		mu.Unlock()
		if ev.Kind == shard.NodeDown && ev.Node.Addr == slow.Addr {
			downOnce.Do(func() { close(downSeen) })
			select { // a hook that logs somewhere slow
			case <-release:
			case <-time.After(10 * time.Second):
			}
		}
	}}
	c := newClient(t, cfg)
	t.Cleanup(func() { releaseOnce.Do(func() { close(release) }) })
	keys := keysByShard(t, c, 1)
	key := keys[slow.Addr][0]
	pauseUntilCleanup(t, slow)
	got := make(chan error, 1)
	go func() {
		_, err := c.Do(context.Background(), "GET", key) // sent, waits for the paused server
		got <- err
	}()
	select {
	case <-downSeen:
	case <-time.After(5 * time.Second):
		t.Fatal("the paused node was not marked down")
	}
	require.NoError(t, slow.Resume())
	select {
	case err := <-got:
		require.NoError(t, err, "the in-flight GET is answered once the server resumes")
	case <-time.After(3 * time.Second):
		t.Fatal("the answered GET waited for the NodeState hook of its node's NodeDown")
	}
	releaseOnce.Do(func() { close(release) })
	want := []string{slow.Addr + " down", slow.Addr + " up"}
	waitFor(t, 5*time.Second, "the NodeUp", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return slices.Contains(events, want[1])
	})
	mu.Lock()
	defer mu.Unlock()
	var mine []string
	for _, e := range events {
		if e == want[0] || e == want[1] {
			mine = append(mine, e)
		}
	}
	require.GreaterOrEqual(t, len(mine), 2, "events: %v", events)
	require.Equal(t, want, mine[:2], "the NodeDown comes before the NodeUp that closes it (events: %v)", events)
}

// TestReview13NodeStateHookMayUseTheClient: a NodeState hook that, told
// a node is up again, calls the client (Stats, a command to that node)
// while the node fails again must not deadlock: with FailureLimit 1 the
// command's failure marks the node down, which waited for the lock that
// the hook was called under. The NodeDown comes after the NodeUp.
func TestReview13NodeStateHookMayUseTheClient(t *testing.T) {
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	cfg := ringConfig(servers)
	cfg.DisableAutoPipeline = true
	cfg.Pool.ReadTimeout = 2 * time.Second
	cfg.Health = shard.HealthOptions{Interval: 100 * time.Millisecond, FailureLimit: 1, Timeout: 200 * time.Millisecond}
	flaky := servers[0]
	var key string
	var c atomic.Pointer[shard.Client]
	hookDone := make(chan error, 1)
	var upOnce sync.Once
	var mu sync.Mutex
	var events []string
	cfg.Hooks = &shard.Hooks{NodeState: func(ev shard.NodeEvent) {
		mu.Lock()
		events = append(events, ev.Kind.String())
		mu.Unlock()
		if ev.Kind != shard.NodeUp || ev.Node.Addr != flaky.Addr {
			return
		}
		upOnce.Do(func() {
			cl := c.Load()
			_ = cl.Stats()
			// The node fails again at once: the command's dial is refused.
			if err := flaky.Stop(); err != nil {
				hookDone <- err
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			_, err := cl.Do(ctx, "GET", key)
			if err == nil {
				err = errors.New("GET on a stopped server succeeded")
			} else {
				err = nil
			}
			hookDone <- err
		})
	}}
	cl, err := shard.New(context.Background(), cfg)
	require.NoError(t, err)
	c.Store(cl)
	hung := true
	t.Cleanup(func() {
		if !hung { // a deadlocked client cannot be closed
			cl.Close()
		}
	})
	key = keysByShard(t, cl, 1)[flaky.Addr][0]
	require.NoError(t, flaky.Pause())
	waitFor(t, 5*time.Second, "the paused node to be marked down", func() bool {
		st := nodeStats(cl, flaky.Addr)
		return len(st) == 1 && st[0].Down
	})
	require.NoError(t, flaky.Resume())
	select {
	case err := <-hookDone:
		require.NoError(t, err)
	case <-time.After(8 * time.Second):
		t.Fatal("the NodeState hook that used the client did not return: deadlock")
	}
	hung = false
	waitFor(t, 5*time.Second, "the NodeDown of the second failure", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(events) >= 3
	})
	st := nodeStats(cl, flaky.Addr)
	require.Len(t, st, 1)
	require.True(t, st[0].Down, "the node failed again")
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, []string{"down", "up", "down"}, events)
}
