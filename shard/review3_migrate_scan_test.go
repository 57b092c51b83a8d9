package shard_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview3RollbackScanReportsTheKeysNotMovedForward: after
// AbortMigration of an armed migration A -> B, and until the reverse
// fence is up, the client routes by B and moves keys forward on touch:
// keys not touched yet are still at their owners in A. A Scan then walked
// and kept only what B (the old topology of the reverse migration, and
// the routing of the moment) places, and missed every key still at A;
// ForEachShard missed A's nodes that B lacks. Every key must be reported
// exactly once.
func TestReview3RollbackScanReportsTheKeysNotMovedForward(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 4, redistest.Options{})
	from, to := ringConfig(servers), ringConfig(servers[:3]) // shrink: servers[3] is in A alone
	old := newClient(t, from)
	const n = 200
	for i := 0; i < n; i++ {
		_, err := old.Do(ctx, "SET", fmt.Sprintf("r3sc:%d", i), i)
		require.NoError(t, err)
	}
	c := newClient(t, armedConfig(from, to))
	for i := 0; i < n; i += 2 { // half of the keys move forward
		_, err := c.Do(ctx, "INCR", fmt.Sprintf("r3sc:%d", i))
		require.NoError(t, err)
	}
	require.NoError(t, c.AbortMigration(ctx))
	info, ok := c.Migration()
	require.True(t, ok)
	require.Equal(t, shard.PhaseWaiting, info.Phase, "the reverse fence is not up")
	seen := map[string]int{}
	s := c.Scan(shard.ScanOptions{Count: 50})
	for s.Next(ctx) {
		seen[s.Key()]++
	}
	require.NoError(t, s.Err())
	assert.Len(t, seen, n, "every key, moved forward or not")
	for k, times := range seen {
		assert.Equal(t, 1, times, "key %s", k)
	}
	var mu sync.Mutex
	visited := map[string]bool{}
	require.NoError(t, c.ForEachShard(ctx, func(ctx context.Context, node shard.Node, conn redis.Conn) error {
		mu.Lock()
		visited[node.Addr] = true
		mu.Unlock()
		return nil
	}))
	assert.Len(t, visited, 4, "ForEachShard reaches the nodes of both topologies")
}

// TestReview3ScanBegunBeforeTheFenceMeetsKeysMovedDuringIt: a Scan begun
// while the migration waits behind its fence (routing by the old
// topology) must still report the keys that move to a node of the new
// topology alone once the fence arms during the Scan.
func TestReview3ScanBegunBeforeTheFenceMeetsKeysMovedDuringIt(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 4, redistest.Options{})
	from, to := ringConfig(servers[:3]), ringConfig(servers) // grow: servers[3] is in B alone
	old := newClient(t, from)
	const n = 200
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("r3sw:%d", i)
		_, err := old.Do(ctx, "SET", keys[i], i)
		require.NoError(t, err)
	}
	cfg := to
	f := from
	cfg.Migration = &shard.Migration{From: &f}
	c := newClient(t, cfg)
	info, ok := c.Migration()
	require.True(t, ok)
	require.Equal(t, shard.PhaseWaiting, info.Phase)
	seen := map[string]int{}
	s := c.Scan(shard.ScanOptions{Count: 10})
	require.True(t, s.Next(ctx), "%v", s.Err())
	seen[s.Key()]++
	require.NoError(t, c.ArmMigration())
	for _, k := range keys { // every key moves to its new owner
		_, err := c.Do(ctx, "INCR", k)
		require.NoError(t, err)
	}
	for s.Next(ctx) {
		seen[s.Key()]++
	}
	require.NoError(t, s.Err())
	assert.Len(t, seen, n, "every key, moved during the Scan or not")
	for k, times := range seen {
		assert.Equal(t, 1, times, "key %s", k)
	}
}
