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
)

// closeProbe is Close as a callback calls it: once, and when the client
// exists; took reports how long Close took (a deadlocked one never does).
type closeProbe struct {
	once sync.Once
	took chan time.Duration
}

func newCloseProbe() *closeProbe { return &closeProbe{took: make(chan time.Duration, 1)} }

func (p *closeProbe) close(c *shard.Client) {
	if c == nil {
		return // New has not returned yet
	}
	p.once.Do(func() {
		start := time.Now()
		_ = c.Close()
		p.took <- time.Since(start)
	})
}

// TestReview7CloseFromCallback: a callback the client runs that closes
// the client (a hook that gives up on a dead node, a ForEachShard
// function) deadlocked when it ran on a goroutine Close waits for.
func TestReview7CloseFromCallback(t *testing.T) {
	noLeaks(t)
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	const bound = 5 * time.Second
	ctx := context.Background()
	tests := []struct {
		name string
		// setup returns the config; trigger makes the callback run.
		setup   func(p *closeProbe, c *atomic.Pointer[shard.Client]) shard.Config
		trigger func(t *testing.T, c *shard.Client)
	}{
		{
			name: "NodeState hook on the health loop",
			setup: func(p *closeProbe, c *atomic.Pointer[shard.Client]) shard.Config {
				cfg := ringConfig(servers)
				cfg.Hooks = &shard.Hooks{NodeState: func(ev shard.NodeEvent) {
					if ev.Kind == shard.NodeDown {
						p.close(c.Load())
					}
				}}
				return cfg
			},
			trigger: func(t *testing.T, _ *shard.Client) {
				require.NoError(t, servers[1].Kill())
				t.Cleanup(func() { require.NoError(t, servers[1].Restart()) })
			},
		},
		{
			name: "Dial hook of a health check",
			setup: func(p *closeProbe, c *atomic.Pointer[shard.Client]) shard.Config {
				cfg := ringConfig(servers)
				cfg.Hooks = &shard.Hooks{Dial: func(context.Context, *shard.DialEvent) { p.close(c.Load()) }}
				return cfg
			},
			trigger: func(*testing.T, *shard.Client) {},
		},
		{
			name: "Dial hook of a parallel batch",
			setup: func(p *closeProbe, c *atomic.Pointer[shard.Client]) shard.Config {
				cfg := ringConfig(servers)
				cfg.Health.Interval = -1
				cfg.DisableAutoPipeline = true
				cfg.Hooks = &shard.Hooks{Dial: func(context.Context, *shard.DialEvent) { p.close(c.Load()) }}
				return cfg
			},
			trigger: func(t *testing.T, c *shard.Client) {
				keys := make([]any, 0, 64)
				for i := range 64 {
					keys = append(keys, fmt.Sprintf("r7close:%d", i))
				}
				_, _ = c.Do(ctx, "MGET", keys...)
			},
		},
		{
			name: "Dial hook of an automatic pipeline",
			setup: func(p *closeProbe, c *atomic.Pointer[shard.Client]) shard.Config {
				cfg := ringConfig(servers)
				cfg.Health.Interval = -1
				cfg.Hooks = &shard.Hooks{Dial: func(context.Context, *shard.DialEvent) { p.close(c.Load()) }}
				return cfg
			},
			trigger: func(t *testing.T, c *shard.Client) {
				var wg sync.WaitGroup
				for g := range 8 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						_, _ = c.Do(ctx, "GET", fmt.Sprintf("r7close:%d", g))
					}()
				}
				wg.Wait()
			},
		},
		{
			name: "HealthCheck",
			setup: func(p *closeProbe, c *atomic.Pointer[shard.Client]) shard.Config {
				cfg := ringConfig(servers)
				cfg.Health.Check = func(ctx context.Context, conn redis.Conn, n shard.Node) error {
					p.close(c.Load())
					return shard.CheckPing(ctx, conn, n)
				}
				return cfg
			},
			trigger: func(*testing.T, *shard.Client) {},
		},
		{
			name: "Router.Nodes on the health loop",
			setup: func(p *closeProbe, c *atomic.Pointer[shard.Client]) shard.Config {
				base := ringConfig(servers)
				r := newPanicRouter(servers)
				f := func() { p.close(c.Load()) }
				r.onNodes.Store(&f)
				return shard.Config{Router: r, Pool: base.Pool, Health: base.Health}
			},
			trigger: func(*testing.T, *shard.Client) {},
		},
		{
			name: "ForEachShard function",
			setup: func(_ *closeProbe, _ *atomic.Pointer[shard.Client]) shard.Config {
				cfg := ringConfig(servers)
				cfg.Health.Interval = -1
				return cfg
			},
			trigger: func(t *testing.T, c *shard.Client) {
				p := newCloseProbe()
				err := c.ForEachShard(ctx, func(ctx context.Context, n shard.Node, conn redis.Conn) error {
					p.close(c)
					return nil
				})
				// A node whose fn had not started when Close came is
				// not visited.
				if err != nil {
					assert.ErrorIs(t, err, shard.ErrClosed)
				}
				select {
				case <-p.took:
				case <-time.After(bound):
					t.Error("Close from ForEachShard's function did not return")
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newCloseProbe()
			var cp atomic.Pointer[shard.Client] // set once New returns; the callbacks read it
			c, err := shard.New(ctx, tt.setup(p, &cp))
			require.NoError(t, err)
			cp.Store(c)
			tt.trigger(t, c)
			if !strings.HasPrefix(tt.name, "ForEachShard") {
				select {
				case took := <-p.took:
					assert.Less(t, took, bound)
				case <-time.After(2 * bound):
					t.Fatal("Close from inside the callback did not return")
				}
			}
			done := make(chan error, 1)
			go func() { done <- c.Close() }()
			select {
			case err := <-done:
				assert.NoError(t, err)
			case <-time.After(bound):
				t.Fatal("a later Close did not return")
			}
			_, err = c.Do(ctx, "GET", "r7close:0")
			assert.ErrorIs(t, err, shard.ErrClosed)
		})
	}
}
