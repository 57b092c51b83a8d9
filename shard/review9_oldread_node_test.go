package shard_test

import (
	"context"
	"sync"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview9ReadAnsweredAtTheOldOwnerNamesIt: during a migration, a
// read whose key still sits at its old owner is answered there (the
// command the Command or Pipeline hook sees on that node) and sent
// nowhere else. The operation must name the node that gave its final
// reply, as Op.Node says, not the new owner that never saw the command:
// a tracer put the new owner's address on the span.
func TestReview9ReadAnsweredAtTheOldOwnerNamesIt(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 4, redistest.Options{})
	from, to := ringConfig(servers[:3]), ringConfig(servers)
	byAddr := serversByAddr(servers)
	keys := movingKeys(t, from, to, "r9old:", 2)

	type finished struct {
		node  string
		nodes int
	}
	var (
		mu    sync.Mutex
		ops   []finished
		parts []string
	)
	cfg := armedConfig(from, to)
	cfg.Hooks = &shard.Hooks{
		Finish: func(_ context.Context, op *shard.Op) {
			mu.Lock()
			defer mu.Unlock()
			ops = append(ops, finished{op.Node.Addr, op.Nodes})
		},
		Command: func(_ context.Context, ev *shard.CommandEvent) {
			mu.Lock()
			defer mu.Unlock()
			parts = append(parts, ev.Node.Addr)
		},
		Pipeline: func(_ context.Context, ev *shard.PipelineEvent) {
			mu.Lock()
			defer mu.Unlock()
			parts = append(parts, ev.Node.Addr)
		},
	}
	c := newClient(t, cfg)

	for i, pipelined := range []bool{false, true} {
		k := keys[i]
		oldAddr, newAddr := ringOwner(t, from, k), ringOwner(t, to, k)
		require.NotEqual(t, oldAddr, newAddr)
		_, err := byAddr[oldAddr].Do("SET", k, "old")
		require.NoError(t, err)
		mu.Lock()
		ops, parts = nil, nil
		mu.Unlock()
		if pipelined {
			p := c.Pipeline()
			p.Send("GET", k)
			res, err := p.Exec(ctx)
			require.NoError(t, err)
			require.Len(t, res, 1)
			assert.Equal(t, []byte("old"), res[0].Reply)
		} else {
			got, err := c.Do(ctx, "GET", k)
			require.NoError(t, err)
			assert.Equal(t, []byte("old"), got)
		}
		mu.Lock()
		assert.Equal(t, []string{oldAddr}, parts, "answered at the old owner only")
		assert.Equal(t, []finished{{oldAddr, 1}}, ops, "pipelined: %v", pipelined)
		mu.Unlock()
	}
}
