package shard_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// TestReview14ScriptDebugLeavesNoStateBehind: SCRIPT DEBUG YES makes the
// next EVAL on its connection start a Lua debugging session instead of
// running the script: the server answers with the debugger's lines and
// waits for debugger commands. The command was classed as changing
// nothing, so a connection that sent it through DoKey, a pipeline, a
// ForEachShard function or a transaction went back to the pool, and the
// next caller's EVAL on that node got the debugger instead of its
// script's result. Whatever path sent it, the next EVALs on that node
// must return the script's result, in ring and cluster mode, with and
// without automatic pipelining.
func TestReview14ScriptDebugLeavesNoStateBehind(t *testing.T) {
	ringServers := redistest.StartNTB(t, 1, redistest.Options{})
	ringCfg := ringConfig(ringServers)
	rc := clusterForTest(t)
	clCfg := clusterConfig(rc.Seeds()...)

	paths := []struct {
		name string
		run  func(ctx context.Context, c *shard.Client, key string) error
	}{
		{"DoKey", func(ctx context.Context, c *shard.Client, key string) error {
			_, err := c.DoKey(ctx, key, "SCRIPT", "DEBUG", "YES")
			return err
		}},
		{"pipeline", func(ctx context.Context, c *shard.Client, key string) error {
			p := c.Pipeline()
			p.SendKey(key, "SCRIPT", "DEBUG", "YES")
			p.Send("GET", key)
			res, err := p.Exec(ctx)
			if err != nil {
				return err
			}
			return res[0].Err
		}},
		{"ForEachShard", func(ctx context.Context, c *shard.Client, key string) error {
			return c.ForEachShard(ctx, func(ctx context.Context, n shard.Node, conn redis.Conn) error {
				_, err := redis.DoContext(conn, ctx, "SCRIPT", "DEBUG", "YES")
				return err
			})
		}},
		{"Tx", func(ctx context.Context, c *shard.Client, key string) error {
			_, err := c.Tx(ctx, []string{key}, func(tx *shard.Tx) error {
				_, err := tx.Do("SCRIPT", "DEBUG", "YES")
				return err
			})
			return err
		}},
	}
	for _, mode := range []struct {
		name string
		cfg  shard.Config
	}{{"ring", ringCfg}, {"cluster", clCfg}} {
		for _, auto := range []bool{false, true} {
			for _, path := range paths {
				name := fmt.Sprintf("%s/auto=%v/%s", mode.name, auto, path.name)
				t.Run(name, func(t *testing.T) {
					cfg := mode.cfg
					cfg.Pool.MaxIdle = 1 // the next borrow gets the connection given back
					cfg.Health.Interval = -1
					cfg.DisableAutoPipeline = !auto
					c := newClient(t, cfg)
					if auto {
						shard.AlwaysPipeline(c)
					}
					ctx := context.Background()
					key := "{r14sd}k"
					require.NoError(t, path.run(ctx, c, key), "SCRIPT DEBUG YES")
					for i := range 3 {
						v, err := redis.Int(c.DoKey(ctx, key, "EVAL", "return 7", 1, key))
						require.NoError(t, err, "EVAL %d after SCRIPT DEBUG YES", i)
						assert.Equal(t, 7, v, "EVAL %d after SCRIPT DEBUG YES", i)
					}
				})
			}
		}
	}
}
