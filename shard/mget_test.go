package shard_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// MGET split over shards or slots answers exactly as one MGET would: values
// in key order, nil for missing keys and for keys of another type.
func testMGETSemantics(t *testing.T, c *shard.Client) {
	ctx := context.Background()
	_, err := c.Do(ctx, "MSET", "ms:a", "1", "ms:b", "2", "{ms}c", "3", "{ms}d", "4")
	require.NoError(t, err)
	_, err = c.Do(ctx, "RPUSH", "ms:list", "x")
	require.NoError(t, err)
	keys := []any{"ms:a", "ms:list", "ms:missing", "{ms}c", "ms:b", "{ms}d", "ms:a"}
	got, err := redis.Values(c.Do(ctx, "MGET", keys...))
	require.NoError(t, err)
	require.Len(t, got, len(keys))
	want := []any{[]byte("1"), nil, nil, []byte("3"), []byte("2"), []byte("4"), []byte("1")}
	assert.Equal(t, want, got)
	// Single key: as GET would, but with MGET's shape.
	got, err = redis.Values(c.Do(ctx, "MGET", "ms:list"))
	require.NoError(t, err)
	assert.Equal(t, []any{nil}, got)
	// Many keys over many slots.
	var many []any
	for i := 0; i < 300; i++ {
		k := fmt.Sprintf("ms:many:%d", i)
		_, err := c.Do(ctx, "SET", k, i)
		require.NoError(t, err)
		many = append(many, k)
	}
	vals, err := redis.Ints(c.Do(ctx, "MGET", many...))
	require.NoError(t, err)
	require.Len(t, vals, len(many))
	for i, v := range vals {
		require.Equal(t, i, v)
	}
}

func TestMGETSemanticsRing(t *testing.T) {
	c, _ := startRing(t, 3)
	testMGETSemantics(t, c)
}

func TestMGETSemanticsCluster(t *testing.T) {
	rc := clusterForTest(t)
	testMGETSemantics(t, newClient(t, clusterConfig(rc.Seeds()...)))
}
