package shard_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A single command costs few allocations beyond redigo's own: the client's
// routing and bookkeeping are recycled.
func TestDoAllocations(t *testing.T) {
	c, _ := startRing(t, 3)
	ctx := context.Background()
	_, err := c.Do(ctx, "SET", "alloc:k", "v")
	require.NoError(t, err)
	args := []any{"alloc:k"}
	allocs := testing.AllocsPerRun(200, func() {
		c.Do(ctx, "GET", args...)
	})
	t.Logf("%.1f allocations per GET", allocs)
	// redigo itself allocates the reply ([]byte) and a few bits of its
	// pool bookkeeping; the client must add almost nothing.
	assert.LessOrEqual(t, allocs, 4.0)
}
