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

// TestReview14PsyncIsNotHandedOn: PSYNC ? -1 answers "+FULLRESYNC ..." at
// once and makes its connection a replica's link: the server then streams
// its data set and its writes on it, and answers nothing else. The command
// was classed as changing nothing, so DoKey, a pipeline and a ForEachShard
// function gave the connection back to the pool after that valid reply,
// and the next caller's GET on that node failed (EOF). DoKey, pipelines
// and Tx must refuse it with a *ConnStateError; a ForEachShard function
// may run it, on a connection that is then closed. Either way the next
// GETs on that node return the value, in ring and cluster mode, with and
// without automatic pipelining.
func TestReview14PsyncIsNotHandedOn(t *testing.T) {
	ringServers := redistest.StartNTB(t, 1, redistest.Options{})
	ringCfg := ringConfig(ringServers)
	rc := clusterForTest(t)
	clCfg := clusterConfig(rc.Seeds()...)

	paths := []struct {
		name    string
		refused bool
		run     func(ctx context.Context, c *shard.Client, key string) error
	}{
		{"DoKey", true, func(ctx context.Context, c *shard.Client, key string) error {
			_, err := c.DoKey(ctx, key, "PSYNC", "?", "-1")
			return err
		}},
		{"pipeline", true, func(ctx context.Context, c *shard.Client, key string) error {
			p := c.Pipeline()
			p.SendKey(key, "PSYNC", "?", "-1")
			p.Send("GET", key)
			res, err := p.Exec(ctx)
			if err != nil {
				return err
			}
			return res[0].Err
		}},
		{"Tx", true, func(ctx context.Context, c *shard.Client, key string) error {
			_, err := c.Tx(ctx, []string{key}, func(tx *shard.Tx) error {
				_, err := tx.Do("PSYNC", "?", "-1")
				return err
			})
			return err
		}},
		{"ForEachShard", false, func(ctx context.Context, c *shard.Client, key string) error {
			return c.ForEachShard(ctx, func(ctx context.Context, n shard.Node, conn redis.Conn) error {
				_, err := redis.DoContext(conn, ctx, "PSYNC", "?", "-1")
				return err
			})
		}},
	}
	for _, mode := range []struct {
		name string
		cfg  shard.Config
	}{{"ring", ringCfg}, {"cluster", clCfg}} {
		for _, auto := range []bool{false, true} {
			for _, path := range paths {
				t.Run(fmt.Sprintf("%s/auto=%v/%s", mode.name, auto, path.name), func(t *testing.T) {
					cfg := mode.cfg
					cfg.Pool.MaxIdle = 1 // the next borrow gets the connection given back
					cfg.Health.Interval = -1
					cfg.DisableAutoPipeline = !auto
					c := newClient(t, cfg)
					if auto {
						shard.AlwaysPipeline(c)
					}
					ctx := context.Background()
					key := "{r14ps}k"
					_, err := c.Do(ctx, "SET", key, "v")
					require.NoError(t, err)
					err = path.run(ctx, c, key)
					if path.refused {
						require.ErrorIs(t, err, shard.ErrConnState, "PSYNC")
						var cse *shard.ConnStateError
						require.ErrorAs(t, err, &cse)
						assert.Equal(t, "PSYNC", cse.Command)
					} else {
						require.NoError(t, err, "PSYNC")
					}
					for i := range 3 {
						v, err := redis.String(c.Do(ctx, "GET", key))
						require.NoError(t, err, "GET %d after PSYNC", i)
						assert.Equal(t, "v", v, "GET %d after PSYNC", i)
					}
				})
			}
		}
	}
}
