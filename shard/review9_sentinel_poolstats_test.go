package shard_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// poolOf returns the pool counters of the node at addr in c's Stats.
func poolOf(t *testing.T, c *shard.Client, addr string) pool.Stats {
	t.Helper()
	for _, n := range c.Stats().Nodes {
		if n.Node.Addr == addr && !n.ReadOnly {
			return n.Pool
		}
	}
	t.Fatalf("no node %s in %v", addr, c.Stats().Nodes)
	return pool.Stats{}
}

// TestReview9SentinelFailoverKeepsThePoolCounters: a Sentinel shard keeps
// its node across a failover ("its counters" too, docs/sentinel.md), but
// its pools start over for the new master, and Stats' pool counters of
// the node (Dials, DialErrors, WaitCount, WaitDuration) went back to zero:
// shardis_pool_dials_total and the OpenTelemetry counters read from Stats
// went backwards for the same series. They go on from where they were.
func TestReview9SentinelFailoverKeepsThePoolCounters(t *testing.T) {
	if testing.Short() {
		t.Skip("a Sentinel failover")
	}
	set := redistest.StartSentinelsTB(t, sentinelSetOptions(1))
	cfg := sentinelConfig(set)
	cfg.Pool.MaxIdle = 1 // every connection beyond one idle is dialed anew
	c := newClient(t, cfg)
	ctx := context.Background()
	const key, node = "r9ps", "sentinel/shard-0" // the shard's stable address (docs/sentinel.md)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				c.Do(ctx, "SET", key, fmt.Sprint(g, i)) //nolint:errcheck // only the dials matter
			}
		}()
	}
	wg.Wait()
	before := poolOf(t, c, node)
	require.Greater(t, before.Dials, int64(1), "%+v", before)

	old, err := set.Master(0)
	require.NoError(t, err)
	next, err := set.Replica(0)
	require.NoError(t, err)
	waitFor(t, 60*time.Second, "a manual failover to be accepted", func() bool {
		_, err := set.Sentinels[0].Do("SENTINEL", "FAILOVER", set.Shards[0].Name)
		return err == nil
	})
	waitFor(t, 60*time.Second, "the client to follow the failover", func() bool {
		return c.Stats().Sentinel[0].Master == next.Addr
	})
	require.NotEqual(t, old.Addr, next.Addr)
	waitFor(t, 30*time.Second, "a write on the new master", func() bool {
		_, err := c.Do(ctx, "SET", key, "after")
		return err == nil
	})
	after := poolOf(t, c, node)
	assert.GreaterOrEqual(t, after.Dials, before.Dials+1, "before %+v, after %+v", before, after)
	assert.GreaterOrEqual(t, after.DialErrors, before.DialErrors)
	assert.GreaterOrEqual(t, after.WaitCount, before.WaitCount)
}
