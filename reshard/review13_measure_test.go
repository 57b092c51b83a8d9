package reshard_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/reshard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview13BytesAcrossPages: the mover reads each page's MEMORY USAGE
// replies and the next SCAN page in one round trip. Over many small
// pages of keys of different sizes, the report's bytes (a dry run's and
// a move's) must be the sum of the keys' MEMORY USAGE, each key counted
// once: a reply left unread, read twice or taken for another command's
// would change it, or fail the move.
func TestReview13BytesAcrossPages(t *testing.T) {
	const n = 60
	ctx := context.Background()
	servers, from, to := moveAll(t)
	old, err := redis.Dial("tcp", servers[0].Addr)
	require.NoError(t, err)
	defer old.Close()
	var want int64
	for i := range n {
		k := fmt.Sprintf("pg:%d", i)
		_, err := old.Do("SET", k, strings.Repeat("v", 100*(i+1)))
		require.NoError(t, err)
		u, err := redis.Int64(old.Do("MEMORY", "USAGE", k))
		require.NoError(t, err)
		want += u
	}
	opts := reshard.Options{From: from, To: to, SkipClientCheck: true, ScanCount: 4, Batch: 3}

	dry := opts
	dry.DryRun = true
	rep, err := reshard.Move(ctx, dry)
	require.NoError(t, err)
	assert.EqualValues(t, n, rep.Moved, "keys a dry run would move")
	assert.Equal(t, want, rep.Bytes, "a dry run's bytes")

	rep, err = reshard.Move(ctx, opts)
	require.NoError(t, err)
	assert.EqualValues(t, n, rep.Moved, "Moved")
	assert.Equal(t, want, rep.Bytes, "Bytes")
	require.Len(t, rep.Flows, 1)
	assert.Equal(t, want, rep.Flows[0].Bytes, "the flow's bytes")
	require.NotNil(t, rep.Verify)
	assert.Zero(t, rep.Verify.Misplaced, "misplaced: %v", rep.Verify.Samples)
	left, err := redis.Int(old.Do("DBSIZE"))
	require.NoError(t, err)
	assert.LessOrEqual(t, left, 1, "keys left at the old node besides the fence's marker")
}

// TestReview13MoveWithoutMemoryUsageAcrossPages: an old node that
// refuses MEMORY USAGE is moved from without sizes
// (TestReview12MoveWithoutMemoryUsage); its refusals arrive with the
// next SCAN page, which must still be read, page after page.
func TestReview13MoveWithoutMemoryUsageAcrossPages(t *testing.T) {
	const n = 40
	ctx := context.Background()
	servers, from, to := moveAll(t)
	fill(t, from, "np", n)
	_, err := servers[0].Do("ACL", "SETUSER", "default", "-memory")
	require.NoError(t, err)

	_, err = reshard.Move(ctx, reshard.Options{From: from, To: to, SkipClientCheck: true, ScanCount: 3, BytesPerSecond: 1 << 20})
	require.Error(t, err, "a pace in bytes without MEMORY USAGE")
	assert.Contains(t, err.Error(), "NOPERM")

	rep, err := reshard.Move(ctx, reshard.Options{From: from, To: to, SkipClientCheck: true, ScanCount: 3, Batch: 2})
	require.NoError(t, err)
	assert.EqualValues(t, n, rep.Moved, "Moved")
	assert.Zero(t, rep.Bytes, "Bytes, not measured")
	require.NotNil(t, rep.Verify)
	assert.Zero(t, rep.Verify.Misplaced, "misplaced: %v", rep.Verify.Samples)
}
