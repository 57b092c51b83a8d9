package shardisprom_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/shardis/shardis/extra/shardisprom"
	"github.com/shardis/shardis/internal/leaktest"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// TestReview15CollectedClientLeavesNothingAfterClose: a client with a
// registered collector and a live subscription leaves no goroutine and no
// connection behind once closed, and a gathering after Close still works.
func TestReview15CollectedClientLeavesNothingAfterClose(t *testing.T) {
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	const name = "leak15-prom"
	cfg := ringOver(servers, "s", shard.HealthOptions{Interval: 50 * time.Millisecond, FailureLimit: 3, Timeout: time.Second})
	cfg.Pool.ClientName = name
	before := leaktest.Snapshot()
	ctx := context.Background()
	c, err := shard.New(ctx, cfg)
	require.NoError(t, err)
	reg := prometheus.NewRegistry()
	require.NoError(t, reg.Register(shardisprom.NewCollector(c, prometheus.Labels{"client": "leak"})))
	for i := 0; i < 50; i++ {
		_, err := c.Do(ctx, "SET", fmt.Sprintf("k%d", i), i)
		require.NoError(t, err)
	}
	_, err = c.PSubscribe(ctx, "ch:*")
	require.NoError(t, err)
	_, err = reg.Gather()
	require.NoError(t, err)
	require.NotEmpty(t, leaktest.NewGoroutines(before), "the check sees the client's goroutines")
	require.NoError(t, c.Close())
	_, err = reg.Gather()
	require.NoError(t, err, "a gathering after Close")
	leaktest.WaitTB(t, before, servers, name)
}
