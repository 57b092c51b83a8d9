package shard_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// TestReviewScanRingWithEjectedShard: with auto-eject, a dead shard leaves
// the ring and its keys are served by the others. A Scan then reports the
// keys the ring serves, each once, and does not fail on the ejected shard,
// which serves none.
func TestReviewScanRingWithEjectedShard(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	cfg := ringConfig(servers)
	cfg.Health.AutoEject = true
	c := newClient(t, cfg)
	const n = 300
	for i := 0; i < n; i++ {
		_, err := c.Do(ctx, "SET", fmt.Sprintf("ej:%d", i), i)
		require.NoError(t, err)
	}
	dead := servers[1]
	var deadKeys []string
	for i := 0; i < n; i++ {
		k := fmt.Sprintf("ej:%d", i)
		if o, _ := c.Router().Route(k); o.Addr == dead.Addr {
			deadKeys = append(deadKeys, k)
		}
	}
	require.NotEmpty(t, deadKeys)
	require.NoError(t, dead.Kill())
	waitFor(t, 10*time.Second, "the dead shard to be ejected", func() bool {
		o, err := c.Router().Route(deadKeys[0])
		return err == nil && o.Addr != dead.Addr
	})
	for _, k := range deadKeys { // rewritten on the survivors
		_, err := c.Do(ctx, "SET", k, "again")
		require.NoError(t, err)
	}
	seen := map[string]int{}
	s := c.Scan(shard.ScanOptions{Match: "ej:*", Count: 20})
	for s.Next(ctx) {
		seen[s.Key()]++
	}
	require.NoError(t, s.Err(), "Scan of a ring whose dead shard is ejected (saw %d keys)", len(seen))
	require.Len(t, seen, n)
	for k, times := range seen {
		require.Equal(t, 1, times, k)
	}
}
