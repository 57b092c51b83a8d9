package shard_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// A cluster MGET of keys in different slots goes out as one GET per key;
// a successful part must not cost an allocation of its own on top of its
// reply (looking at its error, when it has none, allocated one per key).
func TestClusterMGETSplitAllocations(t *testing.T) {
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	ctx := context.Background()
	c, err := shard.New(ctx, shard.Config{Mode: shard.ModeCluster, Seeds: rc.Seeds()})
	require.NoError(t, err)
	defer c.Close()
	const keys = 96
	args := make([]any, keys)
	for i := range args {
		k := fmt.Sprintf("clustersplitalloc:%d", i)
		args[i] = k
		_, err := c.Do(ctx, "SET", k, fmt.Sprint(i))
		require.NoError(t, err)
	}
	check := func() {
		vals, err := redis.Strings(c.Do(ctx, "MGET", args...))
		require.NoError(t, err)
		require.Len(t, vals, keys)
		for i, v := range vals {
			require.Equal(t, fmt.Sprint(i), v)
		}
	}
	check()
	allocs := testing.AllocsPerRun(50, func() {
		c.Do(ctx, "MGET", args...)
	})
	check()
	// Per key: the GET reply's value and its box; the rest (each node's
	// batch, the merged result) does not grow with the keys. One more per
	// key makes 3*keys.
	limit := float64(2*keys + 24)
	if raceDetector {
		limit += 20
	}
	t.Logf("%.1f allocations per MGET of %d keys over 3 masters (limit %.0f)", allocs, keys, limit)
	assert.LessOrEqual(t, allocs, limit)
}
