package shard_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// autoRing starts n servers and a ring client (automatic pipelining is on
// by default) whose connections are named name. Every single command goes through the
// pipelines, even from a lone caller.
func autoRing(t *testing.T, n int, name string) (*shard.Client, []*redistest.Server) {
	t.Helper()
	servers := redistest.StartNTB(t, n, redistest.Options{})
	cfg := ringConfig(servers)
	cfg.Pool.ClientName = name
	c := newClient(t, cfg)
	shard.AlwaysPipeline(c)
	return c, servers
}

// hammer runs goroutines that each SET, GET, INCR and provoke a WRONGTYPE
// error on keys of their own, checking every reply against what that
// goroutine wrote: a reply handed to the wrong caller fails it.
func hammer(t *testing.T, c *shard.Client, prefix string, goroutines, rounds int) {
	t.Helper()
	ctx := context.Background()
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			counter := fmt.Sprintf("%s:{%d}:n", prefix, g)
			_, err := c.Do(ctx, "DEL", counter)
			if !assert.NoError(t, err) {
				return
			}
			for i := 1; i <= rounds; i++ {
				k := fmt.Sprintf("%s:%d:%d", prefix, g, i)
				v := fmt.Sprintf("v-%d-%d", g, i)
				ok, err := redis.String(c.Do(ctx, "SET", k, v))
				if !assert.NoError(t, err) || !assert.Equal(t, "OK", ok) {
					return
				}
				got, err := redis.String(c.Do(ctx, "GET", k))
				if !assert.NoError(t, err) || !assert.Equal(t, v, got, "GET %s", k) {
					return
				}
				n, err := redis.Int(c.Do(ctx, "INCR", counter))
				if !assert.NoError(t, err) || !assert.Equal(t, i, n, "INCR %s", counter) {
					return
				}
				if i%25 == 0 { // a server error is that command's own result
					_, err := c.Do(ctx, "LPUSH", k, "x")
					var re redis.Error
					if !assert.ErrorAs(t, err, &re) || !assert.Contains(t, err.Error(), "WRONGTYPE") {
						return
					}
				}
			}
		}(g)
	}
	wg.Wait()
}

func TestAutoPipelineRepliesReachTheirCallers(t *testing.T) {
	t.Run("ring", func(t *testing.T) {
		servers := redistest.StartNTB(t, 3, redistest.Options{})
		cfg := ringConfig(servers)
		cfg.Pool.ClientName = "auto-ring"
		c := newClient(t, cfg) // lone callers take pooled connections here
		hammer(t, c, "ap", 32, 300)
		// 32 goroutines shared a few connections per server: the
		// pipeline's (and the one it takes after handing back an idle
		// one), one for a caller that found itself alone, and the health
		// checks'. Without the pipeline they open about 90 between them.
		n := clientsNamed(t, servers, "auto-ring")
		assert.LessOrEqual(t, n, 4*len(servers), "connections for 32 goroutines")
		var cmds int64
		for _, st := range c.Stats().Nodes {
			cmds += st.Commands
		}
		assert.GreaterOrEqual(t, cmds, int64(32*(3*300+300/25)), "every command is counted")
	})
	t.Run("cluster", func(t *testing.T) {
		rc := clusterForTest(t)
		cfg := clusterConfig(rc.Seeds()...)
		c := newClient(t, cfg)
		shard.AlwaysPipeline(c)
		hammer(t, c, "apc", 32, 200)
	})
}

// In the pipeline, the abandoned command stays queued for its reply,
// which is then dropped.
func TestAutoPipelineCallerGivingUpDoesNotShiftReplies(t *testing.T) {
	c, servers := autoRing(t, 1, "auto-cancel")
	giveUpThenCheckReplies(t, c, servers[0])
}

func TestAutoPipelineSurvivesAServerRestart(t *testing.T) {
	c, servers := autoRing(t, 2, "auto-restart")
	ctx := context.Background()
	keys := keysByShard(t, c, 1)
	dead, alive := servers[0], servers[1]
	for _, ks := range keys {
		_, err := c.Do(ctx, "SET", ks[0], "x")
		require.NoError(t, err)
	}

	require.NoError(t, dead.Kill())
	start := time.Now()
	_, err := c.Do(ctx, "GET", keys[dead.Addr][0])
	var ne *shard.NodeError
	require.ErrorAs(t, err, &ne)
	assert.Equal(t, dead.Addr, ne.Node.Addr)
	assert.Less(t, time.Since(start), 2*time.Second, "a dead server fails fast")
	v, err := redis.String(c.Do(ctx, "GET", keys[alive.Addr][0]))
	require.NoError(t, err, "the other shard's pipeline is untouched")
	assert.Equal(t, "x", v)

	require.NoError(t, dead.Restart())
	waitFor(t, 5*time.Second, "the restarted shard to answer", func() bool {
		_, err := c.Do(ctx, "SET", keys[dead.Addr][0], "back")
		return err == nil
	})
	v, err = redis.String(c.Do(ctx, "GET", keys[dead.Addr][0]))
	require.NoError(t, err)
	assert.Equal(t, "back", v)
}

func TestAutoPipelineLeavesBlockingCommandsTheirOwnConnection(t *testing.T) {
	c, servers := autoRing(t, 1, "auto-block")
	ctx := context.Background()
	blocked := make(chan error, 1)
	go func() {
		_, err := c.Do(ctx, "BLPOP", "nothing-here", "30")
		blocked <- err
	}()
	waitFor(t, 10*time.Second, "BLPOP to wait on the server", func() bool {
		list, err := servers[0].Do("CLIENT", "LIST")
		return err == nil && strings.Contains(list, "cmd=blpop")
	})
	for i := 0; i < 100; i++ {
		_, err := c.Do(ctx, "SET", fmt.Sprintf("nb:%d", i), i)
		require.NoError(t, err)
	}
	// Had the SETs queued behind BLPOP, they could only have finished
	// after it: it must still be waiting.
	select {
	case err := <-blocked:
		t.Fatalf("BLPOP returned (%v) before the SETs were done: they queued behind it", err)
	default:
	}
	_, err := c.Do(ctx, "LPUSH", "nothing-here", "wake")
	require.NoError(t, err)
	require.NoError(t, <-blocked)

	// A transaction is not pipelined with other callers' commands either.
	out, err := c.Tx(ctx, []string{"tx:a"}, func(tx *shard.Tx) error {
		return tx.Queue("SET", "tx:a", "1")
	})
	require.NoError(t, err)
	assert.Equal(t, []any{"OK"}, out)
}

func TestAutoPipelineCloseEndsEveryCaller(t *testing.T) {
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	cfg := ringConfig(servers)
	cfg.Pool.ClientName = "auto-close"
	c, err := shard.New(context.Background(), cfg)
	require.NoError(t, err)
	shard.AlwaysPipeline(c)

	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; ; i++ {
				if _, err := c.Do(context.Background(), "SET", fmt.Sprintf("cl:%d:%d", g, i), i); err != nil {
					errs <- err
					return
				}
			}
		}(g)
	}
	time.Sleep(100 * time.Millisecond)
	require.NoError(t, c.Close())
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("callers still blocked after Close")
	}
	close(errs)
	for err := range errs {
		assert.True(t, errors.Is(err, shard.ErrClosed), "after Close: %v", err)
	}
	waitFor(t, 3*time.Second, "every connection to close", func() bool {
		return clientsNamed(t, servers, "auto-close") == 0
	})
}

func TestAutoPipelineSurvivesTheServerClosingAnIdleConnection(t *testing.T) {
	servers := redistest.StartNTB(t, 1, redistest.Options{Args: []string{"--timeout", "1"}})
	cfg := ringConfig(servers)
	cfg.Health.Interval = -1 // no PINGs that would keep connections busy
	cfg.Pool.ClientName = "auto-idle"
	c := newClient(t, cfg)
	shard.AlwaysPipeline(c)
	ctx := context.Background()
	_, err := c.Do(ctx, "SET", "idle", "1")
	require.NoError(t, err)
	// The server closes connections idle for more than a second.
	waitFor(t, 5*time.Second, "the server to close the idle connection", func() bool {
		return clientsNamed(t, servers, "auto-idle") == 0
	})
	// A write on the closed connection would end with an error; the
	// pipeline borrows a checked connection instead.
	_, err = c.Do(ctx, "SET", "idle", "2")
	require.NoError(t, err)
	v, err := redis.String(c.Do(ctx, "GET", "idle"))
	require.NoError(t, err)
	assert.Equal(t, "2", v)
}
