package shard_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// TestReview8PipelineEventOperationNamesTransactions: the MULTI ... EXEC
// batch of a transaction came to the Pipeline hook like any pipeline's
// part, so tracers and metrics named it PIPELINE; PipelineEvent.Operation
// tells it apart: MULTI for a Client.Tx's and a Conn's transaction,
// PIPELINE for a pipeline.
func TestReview8PipelineEventOperationNamesTransactions(t *testing.T) {
	servers := redistest.StartNTB(t, 1, redistest.Options{})
	var (
		mu  sync.Mutex
		ops []string
	)
	cfg := ringConfig(servers)
	cfg.Hooks = &shard.Hooks{Pipeline: func(_ context.Context, ev *shard.PipelineEvent) {
		mu.Lock()
		defer mu.Unlock()
		ops = append(ops, ev.Operation())
	}}
	c := newClient(t, cfg)
	ctx := context.Background()
	taken := func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := ops
		ops = nil
		return out
	}

	p := c.Pipeline()
	p.Send("SET", "r8op:a", "1")
	p.Send("GET", "r8op:a")
	_, err := p.Exec(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"PIPELINE"}, taken())

	_, err = c.Tx(ctx, []string{"r8op:a"}, func(tx *shard.Tx) error {
		return tx.Queue("INCR", "r8op:a")
	})
	require.NoError(t, err)
	require.Equal(t, []string{"MULTI"}, taken())

	conn := c.Conn()
	defer conn.Close()
	require.NoError(t, conn.Send("MULTI"))
	require.NoError(t, conn.Send("INCR", "r8op:a"))
	require.NoError(t, conn.Send("EXEC"))
	_, err = conn.Do("")
	require.NoError(t, err)
	require.Equal(t, []string{"MULTI"}, taken())
}
