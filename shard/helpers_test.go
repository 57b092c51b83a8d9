package shard_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ringConfig returns a ring-mode config over servers, named shard-0.. .
func ringConfig(servers []*redistest.Server) shard.Config {
	cfg := shard.Config{
		Pool: pool.Options{DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second},
		// A PING may take hundreds of milliseconds on a loaded machine: a
		// node is marked down after three PINGs of a second each failed
		// (a killed server refuses them at once, so tests stay quick).
		Health: shard.HealthOptions{Interval: 50 * time.Millisecond, FailureLimit: 3, Timeout: time.Second},
	}
	for i, s := range servers {
		cfg.Shards = append(cfg.Shards, ring.Shard{Name: fmt.Sprintf("shard-%d", i), Addr: s.Addr, Weight: 1})
	}
	return cfg
}

// serversByAddr indexes servers by address.
func serversByAddr(servers []*redistest.Server) map[string]*redistest.Server {
	m := make(map[string]*redistest.Server, len(servers))
	for _, s := range servers {
		m[s.Addr] = s
	}
	return m
}

// armedConfig returns to migrating from from, armed: keys move at once, as
// after the fence.
func armedConfig(from, to shard.Config) shard.Config {
	f := from
	to.Migration = &shard.Migration{From: &f, Armed: true}
	return to
}

// nodeStats returns the entries of c.Stats().Nodes for the node at addr
// (none when the client does not list it).
func nodeStats(c *shard.Client, addr string) []shard.NodeStats {
	var out []shard.NodeStats
	for _, n := range c.Stats().Nodes {
		if n.Node.Addr == addr {
			out = append(out, n)
		}
	}
	return out
}

// newClient creates a client closed at the end of the test.
func newClient(t *testing.T, cfg shard.Config) *shard.Client {
	t.Helper()
	c, err := shard.New(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// autoEjectRing starts three servers and a ring client over them with
// Health.AutoEject set, and returns the client, its ring router and the
// servers (servers[i] is configured shard i).
func autoEjectRing(t *testing.T) (*shard.Client, *shard.RingRouter, []*redistest.Server) {
	t.Helper()
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	cfg := ringConfig(servers)
	cfg.Health.AutoEject = true
	c := newClient(t, cfg)
	return c, c.Router().(*shard.RingRouter), servers
}

// nodeEventRing starts two servers and an AutoEject ring client over
// them whose NodeState events are recorded; got returns them so far.
func nodeEventRing(t *testing.T) (*shard.RingRouter, []*redistest.Server, func() []shard.NodeEventKind) {
	t.Helper()
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	var mu sync.Mutex
	var kinds []shard.NodeEventKind
	got := func() []shard.NodeEventKind {
		mu.Lock()
		defer mu.Unlock()
		return append([]shard.NodeEventKind(nil), kinds...)
	}
	cfg := ringConfig(servers)
	cfg.Health.AutoEject = true
	cfg.Hooks = &shard.Hooks{NodeState: func(ev shard.NodeEvent) {
		mu.Lock()
		defer mu.Unlock()
		kinds = append(kinds, ev.Kind)
	}}
	c := newClient(t, cfg)
	rr, ok := c.Router().(*shard.RingRouter)
	require.True(t, ok, "a ring client's Router is its *RingRouter")
	return rr, servers, got
}

// flushServers empties every one of servers (FLUSHALL).
func flushServers(t *testing.T, servers []*redistest.Server) {
	t.Helper()
	for _, s := range servers {
		_, err := s.Do("FLUSHALL")
		require.NoError(t, err)
	}
}

// handEjectedRing empties servers, then returns a new client with ring
// config cfg whose ring router has shard 1 ejected by hand, that router,
// and n key names prefix:0 .. prefix:n-1.
func handEjectedRing(t *testing.T, servers []*redistest.Server, cfg shard.Config, prefix string, n int) (*shard.Client, *shard.RingRouter, []string) {
	t.Helper()
	flushServers(t, servers)
	c := newClient(t, cfg)
	rr, ok := c.Router().(*shard.RingRouter)
	require.True(t, ok, "a ring client's Router is a *RingRouter")
	require.NoError(t, rr.Eject(1))
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("%s:%d", prefix, i)
	}
	return c, rr, keys
}

// startRing starts n real servers and a client over them.
func startRing(t *testing.T, n int) (*shard.Client, []*redistest.Server) {
	t.Helper()
	servers := redistest.StartNTB(t, n, redistest.Options{})
	return newClient(t, ringConfig(servers)), servers
}

// hookedRing starts n real servers and a client over them with hooks.
func hookedRing(t *testing.T, n int, hooks *shard.Hooks) (*shard.Client, []*redistest.Server) {
	t.Helper()
	servers := redistest.StartNTB(t, n, redistest.Options{})
	cfg := ringConfig(servers)
	cfg.Hooks = hooks
	return newClient(t, cfg), servers
}

// pauseUntilCleanup stops s (SIGSTOP): it neither reads nor answers any
// more (a large enough write to it fills the socket buffers and blocks).
// The test's cleanup resumes it.
func pauseUntilCleanup(t *testing.T, s *redistest.Server) {
	t.Helper()
	require.NoError(t, s.Pause())
	t.Cleanup(func() { _ = s.Resume() })
}

// waitFor polls cond until it holds or the timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// allEjectedRing starts a two-shard ring with auto-eject, kills both
// servers and waits until the client has ejected both shards. It returns
// the client and the set of the shards' addresses.
func allEjectedRing(t *testing.T) (*shard.Client, map[string]bool) {
	t.Helper()
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	cfg := ringConfig(servers)
	cfg.Health.AutoEject = true
	c := newClient(t, cfg)
	rr := c.Router().(*shard.RingRouter)
	addrs := map[string]bool{}
	for _, s := range servers {
		addrs[s.Addr] = true
		require.NoError(t, s.Kill())
	}
	waitFor(t, 20*time.Second, "both shards ejected", func() bool { return rr.Ejected(0) && rr.Ejected(1) })
	return c, addrs
}

// modeConfig is a client configuration for one mode, named for subtests.
type modeConfig struct {
	name string
	cfg  shard.Config
}

// ringAndCluster starts a one-server ring and gets the shared test
// cluster, and returns a configuration for each: "ring", then "cluster".
func ringAndCluster(t *testing.T) []modeConfig {
	t.Helper()
	ringServers := redistest.StartNTB(t, 1, redistest.Options{})
	rc := clusterForTest(t)
	return []modeConfig{{"ring", ringConfig(ringServers)}, {"cluster", clusterConfig(rc.Seeds()...)}}
}

// handOnClient returns a client over cfg whose pools keep one idle
// connection, so that the next borrow gets the connection given back
// last, with no health checks to borrow it in between; auto: every call
// is pipelined automatically, else none is.
func handOnClient(t *testing.T, cfg shard.Config, auto bool) *shard.Client {
	t.Helper()
	cfg.Pool.MaxIdle = 1
	cfg.Health.Interval = -1
	cfg.DisableAutoPipeline = !auto
	c := newClient(t, cfg)
	if auto {
		shard.AlwaysPipeline(c)
	}
	return c
}

// requireConnStateRefusal checks that err is a *ConnStateError for the
// command named command.
func requireConnStateRefusal(t *testing.T, err error, command, what string) {
	t.Helper()
	require.ErrorIs(t, err, shard.ErrConnState, what)
	var cse *shard.ConnStateError
	require.ErrorAs(t, err, &cse, what)
	assert.Equal(t, command, cse.Command, what)
}

// sendPath is one way for a caller to send a command: it sends the
// command and returns its error.
type sendPath struct {
	name string
	run  func(ctx context.Context, c *shard.Client, key string) error
}

// sendPaths returns the ways of sending the command cmd args: DoKey on
// key, a pipeline (SendKey on key, then a GET of key; the command's
// error), a Tx watching key, and a ForEachShard function on its
// connection.
func sendPaths(cmd string, args ...any) []sendPath {
	return []sendPath{
		{"DoKey", func(ctx context.Context, c *shard.Client, key string) error {
			_, err := c.DoKey(ctx, key, cmd, args...)
			return err
		}},
		{"pipeline", func(ctx context.Context, c *shard.Client, key string) error {
			p := c.Pipeline()
			p.SendKey(key, cmd, args...)
			p.Send("GET", key)
			res, err := p.Exec(ctx)
			if err != nil {
				return err
			}
			return res[0].Err
		}},
		{"Tx", func(ctx context.Context, c *shard.Client, key string) error {
			_, err := c.Tx(ctx, []string{key}, func(tx *shard.Tx) error {
				_, err := tx.Do(cmd, args...)
				return err
			})
			return err
		}},
		{"ForEachShard", func(ctx context.Context, c *shard.Client, key string) error {
			return c.ForEachShard(ctx, func(ctx context.Context, n shard.Node, conn redis.Conn) error {
				_, err := redis.DoContext(conn, ctx, cmd, args...)
				return err
			})
		}},
	}
}
