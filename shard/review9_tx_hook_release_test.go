package shard_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview9TxBatchIsReportedOnceItsConnectionIsBack: the Pipeline hook
// sees a pipeline's part once its connection is back in the pool, and
// so must it see a transaction's MULTI ... EXEC: a hook that reads the
// client's Stats (connections in use, as the exporters do) or takes its
// time held the transaction's connection (and the migration fence)
// while it ran, so that another caller of a full pool waited for the
// hook.
func TestReview9TxBatchIsReportedOnceItsConnectionIsBack(t *testing.T) {
	s := redistest.StartTB(t, redistest.Options{})
	var client atomic.Pointer[shard.Client]
	var mu sync.Mutex
	used := map[string][]int{} // by PipelineEvent.Operation: connections in use during the hook
	cfg := ringConfig([]*redistest.Server{s})
	cfg.Health.Interval = -1
	cfg.Hooks = &shard.Hooks{Pipeline: func(_ context.Context, ev *shard.PipelineEvent) {
		c := client.Load()
		if c == nil {
			return
		}
		n := -1
		for _, ns := range nodeStats(c, ev.Node.Addr) {
			n = ns.Pool.Active - ns.Pool.Idle
		}
		mu.Lock()
		used[ev.Operation()] = append(used[ev.Operation()], n)
		mu.Unlock()
	}}
	c := newClient(t, cfg)
	client.Store(c)
	ctx := context.Background()

	p := c.Pipeline()
	p.Send("SET", "r9rel", "a")
	p.Send("GET", "r9rel")
	_, err := p.Exec(ctx)
	require.NoError(t, err)
	_, err = c.Tx(ctx, []string{"r9rel"}, func(tx *shard.Tx) error { return tx.Queue("SET", "r9rel", "b") })
	require.NoError(t, err)

	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, map[string][]int{"PIPELINE": {0}, "MULTI": {0}}, used,
		"connections in use while the Pipeline hook ran, by operation")
}
