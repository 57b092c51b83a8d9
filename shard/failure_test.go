package shard_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// keysByShard returns n keys for each node, keyed by node address.
func keysByShard(t *testing.T, c *shard.Client, n int) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for i := 0; ; i++ {
		k := fmt.Sprintf("f:%d", i)
		node, err := c.Router().Route(k)
		require.NoError(t, err)
		if len(out[node.Addr]) < n {
			out[node.Addr] = append(out[node.Addr], k)
		}
		full := len(out) == len(c.Nodes())
		for _, ks := range out {
			full = full && len(ks) == n
		}
		if full {
			return out
		}
	}
}

func TestDeadShardFailsOnlyItsOwnKeys(t *testing.T) {
	ctx := context.Background()
	c, servers := startRing(t, 3)
	keys := keysByShard(t, c, 50)
	for _, ks := range keys {
		for _, k := range ks {
			_, err := c.Do(ctx, "SET", k, k)
			require.NoError(t, err)
		}
	}
	dead := servers[1]
	require.NoError(t, dead.Kill())

	// Single commands: the dead shard's fail fast with a typed error naming it; the others serve.
	for addr, ks := range keys {
		for _, k := range ks[:10] {
			start := time.Now()
			v, err := redis.String(c.Do(ctx, "GET", k))
			if addr == dead.Addr {
				var ne *shard.NodeError
				require.ErrorAs(t, err, &ne)
				assert.Equal(t, dead.Addr, ne.Node.Addr)
				assert.Equal(t, "shard-1", ne.Node.Name)
				assert.Contains(t, err.Error(), "shard-1")
				assert.Less(t, time.Since(start), 2*time.Second, "within the configured timeout")
				continue
			}
			require.NoError(t, err)
			assert.Equal(t, k, v)
		}
	}

	// A pipeline reports per-command errors for the dead shard and results for the rest.
	p := c.Pipeline()
	var order []string
	for _, ks := range keys {
		for _, k := range ks {
			p.Send("GET", k)
			order = append(order, k)
		}
	}
	res, err := p.Exec(ctx)
	require.NoError(t, err)
	for i, k := range order {
		node, _ := c.Router().Route(k)
		if node.Addr == dead.Addr {
			var ne *shard.NodeError
			assert.ErrorAs(t, res[i].Err, &ne)
		} else {
			require.NoError(t, res[i].Err)
			assert.Equal(t, []byte(k), res[i].Reply)
		}
	}

	// Health checks mark it down: then it fails fast without dialing.
	waitFor(t, 10*time.Second, "the dead shard to be marked down", func() bool {
		_, err := c.Do(ctx, "GET", keys[dead.Addr][0])
		return errors.Is(err, shard.ErrNodeDown)
	})
	for _, st := range c.Stats().Nodes {
		assert.Equal(t, st.Node.Addr == dead.Addr, st.Down, st.Node.Name)
	}

	// A restart brings the shard back (with an empty dataset: the test servers do not persist).
	require.NoError(t, dead.Restart())
	waitFor(t, 5*time.Second, "the shard to come back", func() bool {
		_, err := c.Do(ctx, "SET", keys[dead.Addr][0], "back")
		return err == nil
	})
	v, err := redis.String(c.Do(ctx, "GET", keys[dead.Addr][0]))
	require.NoError(t, err)
	assert.Equal(t, "back", v)
}

func TestPausedShardTimesOutWithoutHanging(t *testing.T) {
	ctx := context.Background()
	c, servers := startRing(t, 3)
	keys := keysByShard(t, c, 5)
	paused := servers[2]
	require.NoError(t, paused.Pause())
	defer paused.Resume()

	start := time.Now()
	_, err := c.Do(ctx, "GET", keys[paused.Addr][0])
	var ne *shard.NodeError
	require.ErrorAs(t, err, &ne)
	assert.Less(t, time.Since(start), 2500*time.Millisecond, "bounded by the 1s read timeout")

	// Others keep serving meanwhile.
	for addr, ks := range keys {
		if addr == paused.Addr {
			continue
		}
		_, err := c.Do(ctx, "SET", ks[0], "x")
		require.NoError(t, err)
	}
}

func TestCancelledContextReturnsPromptly(t *testing.T) {
	// Timeouts far longer than the contexts, and no health checks, so that
	// only the contexts can end the waits: the bounds below then tell
	// "returned when the context ended" from "waited for a timeout" with
	// room to spare on a loaded machine.
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	cfg := ringConfig(servers)
	cfg.Pool.ReadTimeout, cfg.Pool.WriteTimeout = 30*time.Second, 30*time.Second
	cfg.Health.Interval = -1
	c := newClient(t, cfg)
	keys := keysByShard(t, c, 2)
	require.NoError(t, servers[0].Pause())
	defer servers[0].Resume()

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	_, err := c.Do(ctx, "GET", keys[servers[0].Addr][0])
	assert.ErrorIs(t, err, context.Canceled)
	assert.Less(t, time.Since(start), 10*time.Second, "returned when the context ended, not after the 30s read timeout")

	ctx2, cancel2 := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel2()
	p := c.Pipeline()
	p.Send("GET", keys[servers[0].Addr][1])
	p.Send("GET", keys[servers[1].Addr][0])
	start = time.Now()
	res, err := p.Exec(ctx2)
	require.NoError(t, err)
	require.Len(t, res, 2)
	assert.ErrorIs(t, res[0].Err, context.DeadlineExceeded)
	assert.NoError(t, res[1].Err, "the healthy shard answered in time")
	assert.Less(t, time.Since(start), 12*time.Second, "returned at the context's deadline, not after the 30s read timeout")

	already, cancel3 := context.WithCancel(context.Background())
	cancel3()
	_, err = c.Do(already, "GET", "k")
	assert.ErrorIs(t, err, context.Canceled)
}

func TestAutoEjectMovesKeysAndBringsThemBack(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	cfg := ringConfig(servers)
	cfg.Health.AutoEject = true
	c := newClient(t, cfg)
	keys := keysByShard(t, c, 20)
	dead := servers[0]
	require.NoError(t, dead.Kill())

	waitFor(t, 10*time.Second, "the dead shard to be ejected", func() bool {
		n, err := c.Router().Route(keys[dead.Addr][0])
		return err == nil && n.Addr != dead.Addr
	})
	// Its keys now live on the survivors and can be written and read.
	for _, k := range keys[dead.Addr] {
		_, err := c.Do(ctx, "SET", k, "moved")
		require.NoError(t, err)
		n, _ := c.Router().Route(k)
		assert.NotEqual(t, dead.Addr, n.Addr)
	}
	// Other keys did not move.
	for addr, ks := range keys {
		if addr == dead.Addr {
			continue
		}
		for _, k := range ks {
			n, _ := c.Router().Route(k)
			assert.Equal(t, addr, n.Addr, "key %s stays on its live shard", k)
		}
	}
	require.NoError(t, dead.Restart())
	waitFor(t, 5*time.Second, "the shard to rejoin the ring", func() bool {
		n, err := c.Router().Route(keys[dead.Addr][0])
		return err == nil && n.Addr == dead.Addr
	})
	_, err := c.Do(ctx, "SET", keys[dead.Addr][0], "home")
	require.NoError(t, err)
	v, err := dead.Do("GET", keys[dead.Addr][0])
	require.NoError(t, err)
	assert.Equal(t, "home", v)
}
