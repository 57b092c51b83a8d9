package shard_test

import (
	"context"
	"sync"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview14MGETSentAgainWithoutGetIsOneOperation: a split MGET of a
// user who may not run GET has its one-key parts refused ("NOPERM ...
// 'get'") and is sent again without GET parts, and the caller gets its
// values: one Do, one Exec. The Start and Finish hooks saw two
// operations, the first failed with a refusal the caller never got: a
// tracer made an error span and metrics counted a failure for a call
// that succeeded.
func TestReview14MGETSentAgainWithoutGetIsOneOperation(t *testing.T) {
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	for _, s := range servers {
		_, err := s.Do("ACL", "SETUSER", "r14noget", "on", ">pw", "~*", "&*", "+@all", "-get")
		require.NoError(t, err)
	}
	var mu sync.Mutex
	var ops []string
	h := &shard.Hooks{
		Finish: func(_ context.Context, op *shard.Op) {
			mu.Lock()
			defer mu.Unlock()
			ops = append(ops, op.Operation()+" "+op.Outcome.String())
		},
	}
	cfg := ringConfig(servers)
	cfg.Pool.Username, cfg.Pool.Password = "r14noget", "pw"
	cfg.Hooks = h
	ctx := context.Background()
	// Two keys on each shard's own: each part of their MGET is one key.
	var keys []any
	owner := map[string]bool{}
	probe := newClient(t, cfg)
	for i := 0; len(keys) < 2 && i < 1000; i++ {
		k := "r14ng:" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		n, err := probe.Router().Route(k)
		require.NoError(t, err)
		if !owner[n.Addr] {
			owner[n.Addr] = true
			keys = append(keys, k)
			_, err := probe.Do(ctx, "SET", k, "v-"+k)
			require.NoError(t, err)
		}
	}
	require.Len(t, keys, 2)

	for _, pipelined := range []bool{false, true} {
		c := newClient(t, cfg)
		mu.Lock()
		ops = nil
		mu.Unlock()
		var got []string
		var err error
		if pipelined {
			p := c.Pipeline()
			p.Send("MGET", keys...)
			res, xerr := p.Exec(ctx)
			require.NoError(t, xerr)
			got, err = redis.Strings(res[0].Reply, res[0].Err)
		} else {
			got, err = redis.Strings(c.Do(ctx, "MGET", keys...))
		}
		require.NoError(t, err)
		assert.Equal(t, []string{"v-" + keys[0].(string), "v-" + keys[1].(string)}, got)
		want := "MGET ok"
		if pipelined {
			want = "PIPELINE ok"
		}
		mu.Lock()
		assert.Equal(t, []string{want}, ops, "pipelined=%t", pipelined)
		mu.Unlock()
	}
}
