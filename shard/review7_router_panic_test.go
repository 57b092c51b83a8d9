package shard_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// noLeaks checks, once the test and its cleanups (clients, servers) are
// done, that no goroutine started since is left.
func noLeaks(t *testing.T) {
	before := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, before) })
}

// panicRouter is a user's Router over two nodes that panics when armed:
// Nodes with nodesPanic set, Route for the keys that start with "boom:".
type panicRouter struct {
	a, b       shard.Node
	nodesPanic atomic.Bool
	nodesCalls atomic.Int64
	onNodes    atomic.Pointer[func()] // run inside Nodes when set
}

func (r *panicRouter) Route(key string) (shard.Node, error) {
	if strings.HasPrefix(key, "boom:") {
		panic("review7: Route of " + key)
	}
	if strings.HasPrefix(key, "b:") {
		return r.b, nil
	}
	return r.a, nil
}

func (r *panicRouter) Nodes() []shard.Node {
	r.nodesCalls.Add(1)
	if f := r.onNodes.Load(); f != nil {
		(*f)()
	}
	if r.nodesPanic.Load() {
		panic("review7: Nodes")
	}
	return []shard.Node{r.a, r.b}
}

func newPanicRouter(servers []*redistest.Server) *panicRouter {
	return &panicRouter{a: shard.Node{Name: "a", Addr: servers[0].Addr}, b: shard.Node{Name: "b", Addr: servers[1].Addr}}
}

// TestReview7RouterPanicIsContained: a user's Router that panicked in
// Nodes on the health check's goroutine crashed the whole process, and
// one that panicked in Route (on the caller's goroutine, in the middle of
// the client's planning) unwound through the client.
func TestReview7RouterPanicIsContained(t *testing.T) {
	noLeaks(t)
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	base := ringConfig(servers)
	r := newPanicRouter(servers)
	var mu sync.Mutex
	var reported []*shard.PanicError
	hooks := &shard.Hooks{Panic: func(err *shard.PanicError) {
		mu.Lock()
		reported = append(reported, err)
		mu.Unlock()
	}}
	c := newClient(t, shard.Config{Router: r, Pool: base.Pool, Health: base.Health, Hooks: hooks})
	ctx := context.Background()
	assert.Same(t, r, c.Router(), "Router returns the program's own")

	t.Run("Nodes on the health loop", func(t *testing.T) {
		_, err := c.Do(ctx, "SET", "b:k", "v")
		require.NoError(t, err)
		r.nodesPanic.Store(true)
		from := r.nodesCalls.Load()
		waitFor(t, 10*time.Second, "three health ticks with Nodes panicking", func() bool {
			return r.nodesCalls.Load() >= from+3
		})
		r.nodesPanic.Store(false)
		mu.Lock()
		got := append([]*shard.PanicError(nil), reported...)
		mu.Unlock()
		require.NotEmpty(t, got, "the panics went to Hooks.Panic")
		assert.Equal(t, "Router.Nodes", got[0].Callback)
		assert.Equal(t, "review7: Nodes", got[0].Value)
		assert.Contains(t, string(got[0].Stack), "panicRouter", "the stack is the panic's")
		val, err := redis.String(c.Do(ctx, "GET", "b:k"))
		require.NoError(t, err)
		assert.Equal(t, "v", val)
		// The nodes were not retired for a list that never came.
		assert.Len(t, c.Stats().Nodes, 2)
	})

	t.Run("Route on the caller's path", func(t *testing.T) {
		var err error
		assert.NotPanics(t, func() { _, err = c.Do(ctx, "SET", "boom:k", "v") })
		var perr *shard.PanicError
		require.ErrorAs(t, err, &perr)
		assert.Equal(t, "Router.Route", perr.Callback)
		assert.Equal(t, "review7: Route of boom:k", perr.Value)
		// A pipeline's command for that key fails alone.
		p := c.Pipeline()
		p.Send("SET", "a:k", "1")
		p.Send("GET", "boom:k")
		var res []shard.Result
		assert.NotPanics(t, func() { res, err = p.Exec(ctx) })
		require.NoError(t, err)
		require.Len(t, res, 2)
		assert.NoError(t, res[0].Err)
		assert.ErrorAs(t, res[1].Err, &perr)
		got, err := redis.String(c.Do(ctx, "GET", "b:k"))
		require.NoError(t, err)
		assert.Equal(t, "v", got)
	})
	require.NoError(t, c.Close())
}

// TestReview7HookPanicIsContained: a hook that panicked on one of the
// client's goroutines (NodeState and Dial on the health check's) crashed
// the process; the panic now goes to Hooks.Panic and the work it
// interrupted goes on (the down shard is still ejected).
func TestReview7HookPanicIsContained(t *testing.T) {
	noLeaks(t)
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	cfg := ringConfig(servers)
	cfg.Health.AutoEject = true
	var mu sync.Mutex
	seen := map[string]int{}
	cfg.Hooks = &shard.Hooks{
		NodeState: func(ev shard.NodeEvent) { panic("review7: NodeState " + ev.Kind.String()) },
		Dial:      func(context.Context, *shard.DialEvent) { panic("review7: Dial") },
		Panic: func(err *shard.PanicError) {
			mu.Lock()
			seen[fmt.Sprint(err.Callback, " ", err.Value)]++
			mu.Unlock()
		},
	}
	c := newClient(t, cfg)
	ctx := context.Background()
	require.NoError(t, servers[1].Kill())
	waitFor(t, 10*time.Second, "the NodeState hook's panics (down, ejected) to be reported", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return seen["Hooks.NodeState review7: NodeState down"] > 0 && seen["Hooks.NodeState review7: NodeState ejected"] > 0
	})
	mu.Lock()
	assert.Positive(t, seen["Hooks.Dial review7: Dial"])
	mu.Unlock()
	// Ejected: every key is served by the shard that is left.
	for i := range 20 {
		_, err := c.Do(ctx, "SET", fmt.Sprintf("r7hook:%d", i), i)
		require.NoError(t, err)
	}
	require.NoError(t, c.Close())
	require.NoError(t, servers[1].Restart())
}

// TestReview7HealthCheckPanicIsAFailedCheck: a HealthOptions.Check that
// panicked on the health check's goroutine crashed the process; it is
// now a failed check (FailureLimit of them mark the node down, the
// NodeDown's Err a *PanicError), reported to Hooks.Panic, and the
// client serves the node again, from database 0, once the check passes.
func TestReview7HealthCheckPanicIsAFailedCheck(t *testing.T) {
	noLeaks(t)
	servers := redistest.StartNTB(t, 1, redistest.Options{})
	cfg := ringConfig(servers)
	var panicking atomic.Bool
	cfg.Health.Check = func(ctx context.Context, conn redis.Conn, n shard.Node) error {
		if panicking.Load() {
			_ = conn.Send("SELECT", "1") // its reply left unread
			_ = conn.Flush()
			panic("review7: HealthCheck")
		}
		return shard.CheckPing(ctx, conn, n)
	}
	var reported atomic.Int32
	down := make(chan shard.NodeEvent, 1)
	cfg.Hooks = &shard.Hooks{
		NodeState: func(ev shard.NodeEvent) {
			if ev.Kind == shard.NodeDown {
				select {
				case down <- ev:
				default:
				}
			}
		},
		Panic: func(err *shard.PanicError) {
			if err.Callback == "HealthCheck" && err.Value == "review7: HealthCheck" {
				reported.Add(1)
			}
		},
	}
	c := newClient(t, cfg)
	ctx := context.Background()
	_, err := c.Do(ctx, "SET", "r7hc:k", "v")
	require.NoError(t, err)
	panicking.Store(true)
	var ev shard.NodeEvent
	select {
	case ev = <-down:
	case <-time.After(10 * time.Second):
		t.Fatal("the node was not marked down")
	}
	var perr *shard.PanicError
	require.ErrorAs(t, ev.Err, &perr)
	assert.Equal(t, "HealthCheck", perr.Callback)
	assert.GreaterOrEqual(t, reported.Load(), int32(cfg.Health.FailureLimit))
	panicking.Store(false)
	// Up again at the next good check; the connections the check left
	// (SELECT 1, a reply unread) serve no command.
	waitFor(t, 10*time.Second, "the node to answer again", func() bool {
		_, err := c.Do(ctx, "GET", "r7hc:k")
		return err == nil
	})
	for range 10 {
		got, err := redis.String(c.Do(ctx, "GET", "r7hc:k"))
		require.NoError(t, err)
		assert.Equal(t, "v", got)
	}
	require.NoError(t, c.Close())
}
