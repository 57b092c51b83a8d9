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

// An MGET split over shards costs the allocations of its replies and of
// the merged result, not allocations per key for the split itself: each
// part's arguments and key ordinals are cut to size from the batch's
// recycled buffers.
func TestMGETSplitAllocations(t *testing.T) {
	for _, tc := range []struct {
		name string
		keys int
	}{
		{"keys=12", 12},
		{"keys=96", 96},
		{"keys=600", 600},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := startRing(t, 3)
			ctx := context.Background()
			args := make([]any, tc.keys)
			for i := range args {
				k := fmt.Sprintf("splitalloc:%d", i)
				args[i] = k
				_, err := c.Do(ctx, "SET", k, fmt.Sprint(i))
				require.NoError(t, err)
			}
			var nodes = map[string]bool{}
			for _, a := range args {
				n, err := c.Router().Route(a.(string))
				require.NoError(t, err)
				nodes[n.Name] = true
			}
			require.Len(t, nodes, 3, "the keys must lie on every shard")
			allocs := mgetAllocations(t, c, args)
			// Per key the reply costs at most its value and the box
			// that holds it; the rest (each part's reply array and
			// connection handle, the merged result: about a dozen) does not grow with
			// the keys. A split that grew each part key by key would add
			// two allocations per doubling of every part: 10 at 12 keys,
			// 30 at 96.
			limit := float64(2*tc.keys + 16)
			if raceDetector {
				limit += 20
			}
			t.Logf("%.1f allocations per MGET of %d keys over 3 shards (limit %.0f)", allocs, tc.keys, limit)
			assert.LessOrEqual(t, allocs, limit)
		})
	}
}

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
	allocs := mgetAllocations(t, c, args)
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

// mgetAllocations returns the allocations of c.Do("MGET", args...), and
// checks before and after that the i-th key's value is the number i.
func mgetAllocations(t *testing.T, c *shard.Client, args []any) float64 {
	t.Helper()
	ctx := context.Background()
	check := func() {
		vals, err := redis.Strings(c.Do(ctx, "MGET", args...))
		require.NoError(t, err)
		require.Len(t, vals, len(args))
		for i, v := range vals {
			require.Equal(t, fmt.Sprint(i), v)
		}
	}
	check()
	allocs := testing.AllocsPerRun(50, func() {
		c.Do(ctx, "MGET", args...)
	})
	check()
	return allocs
}
