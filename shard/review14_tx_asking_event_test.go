package shard_test

import (
	"context"
	"sync"
	"testing"

	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// commandsAt returns NodeStats.Commands of the master at addr.
func commandsAt(c *shard.Client, addr string) int64 {
	for _, n := range c.Stats().Nodes {
		if n.Node.Addr == addr && !n.ReadOnly {
			return n.Commands
		}
	}
	return -1
}

// TestReview14TxBatchAtImportingNodeCountsAsStats: a transaction sent
// again at a slot's importing node (after ASK) sends ASKING in front of
// MULTI. ASKING is no command of the caller's: Stats does not count it,
// nor does a pipeline's part sent with ASKING; the transaction's batch
// event counted it among its Commands and Outcomes. It now counts MULTI,
// the queued SET and EXEC: 3, as Stats does.
func TestReview14TxBatchAtImportingNodeCountsAsStats(t *testing.T) {
	var (
		mu      sync.Mutex
		batches []shard.PipelineEvent
	)
	hooks := &shard.Hooks{Pipeline: func(_ context.Context, ev *shard.PipelineEvent) {
		mu.Lock()
		defer mu.Unlock()
		batches = append(batches, *ev)
	}}
	rc, c, a, b := clusterAB(t, hooks)
	ctx := context.Background()
	key, slot := keyOnMaster(t, rc, a, "r14txask")
	_, err := c.Do(ctx, "DEL", key) // the client knows the slot's master
	require.NoError(t, err)
	migratingSlot(t, slot, a, b) // the key is missing at a: ASK to b
	before := commandsAt(c, b.Addr)
	vals, err := c.Tx(ctx, []string{key}, func(tx *shard.Tx) error {
		return tx.Queue("SET", key, "v")
	})
	require.NoError(t, err)
	assert.Equal(t, []any{"OK"}, vals)
	// At b: WATCH, MULTI, SET, EXEC (ASKING is no command).
	assert.Equal(t, int64(4), commandsAt(c, b.Addr)-before)
	mu.Lock()
	defer mu.Unlock()
	var atB []shard.PipelineEvent
	for _, ev := range batches {
		if ev.ServerAddr == b.Addr {
			atB = append(atB, ev)
		}
	}
	require.Len(t, atB, 1, "%+v", batches)
	assert.Equal(t, 3, atB[0].Commands)
	assert.Equal(t, 3, atB[0].Outcomes[shard.OutcomeOK])
	assert.Equal(t, shard.OutcomeOK, atB[0].Outcome)
}
