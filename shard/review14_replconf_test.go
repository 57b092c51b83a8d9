package shard_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/shard"
)

// TestReview14ReplconfAckIsRefused: the server never answers REPLCONF ACK
// (nor GETACK) from a client that is not a replica's link. It was classed
// as an ordinary command, so in a pipeline the reply of the command after
// it became its reply, each later command got the reply of the one after
// it (GET a returned b's value), and the last one waited for its read
// timeout. DoKey and pipelines must refuse it with a *ConnStateError, and
// the other commands of the pipeline get their own replies, in ring and
// cluster mode; a ForEachShard function may send it, and the next callers
// on that node get their own replies.
func TestReview14ReplconfAckIsRefused(t *testing.T) {
	for _, mode := range ringAndCluster(t) {
		t.Run(mode.name, func(t *testing.T) {
			cfg := mode.cfg
			cfg.Pool.MaxIdle = 1
			cfg.Health.Interval = -1
			c := newClient(t, cfg)
			ctx := context.Background()
			key := func(i int) string { return fmt.Sprintf("{r14rc}%d", i) }
			for i := range 3 {
				_, err := c.Do(ctx, "SET", key(i), i)
				require.NoError(t, err)
			}
			checkValues := func(what string) {
				t.Helper()
				for i := range 3 {
					v, err := redis.Int(c.Do(ctx, "GET", key(i)))
					require.NoError(t, err, what)
					assert.Equal(t, i, v, "%s: GET %s", what, key(i))
				}
			}

			_, err := c.DoKey(ctx, key(0), "REPLCONF", "ACK", "0")
			requireConnStateRefusal(t, err, "REPLCONF", "DoKey")

			p := c.Pipeline()
			p.SendKey(key(0), "REPLCONF", "ACK", "0")
			p.Send("GET", key(1))
			p.Send("GET", key(2))
			res, err := p.Exec(ctx)
			require.NoError(t, err)
			require.Len(t, res, 3)
			requireConnStateRefusal(t, res[0].Err, "REPLCONF", "pipeline")
			for i := 1; i <= 2; i++ {
				v, err := redis.Int(res[i].Reply, res[i].Err)
				require.NoError(t, err, "pipeline: GET %s", key(i))
				assert.Equal(t, i, v, "pipeline: GET %s", key(i))
			}

			require.NoError(t, c.ForEachShard(ctx, func(ctx context.Context, n shard.Node, conn redis.Conn) error {
				if err := conn.Send("REPLCONF", "GETACK", "*"); err != nil {
					return err
				}
				return conn.Flush()
			}))
			checkValues("after ForEachShard")
		})
	}
}
