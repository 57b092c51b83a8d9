package reshard_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/reshard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMovePaceKeepsTheBatches: a paced mover sleeps between batches, and
// the sleep is not time the old node was held. Counted as such, it shrank
// the batches to a few keys (one MIGRATE per handful of keys, several
// times the servers' CPU per key at the pace meant to spare them).
func TestMovePaceKeepsTheBatches(t *testing.T) {
	ctx := context.Background()
	servers, from, to := moveAll(t)
	fill(t, from, "batch", 300)
	before := migrateCalls(t, servers[0])
	start := time.Now()
	// 300 keys at 400 keys/s: about 0.75 s, in batches of 100 (a quarter
	// second's worth at the pace, the most a paced batch carries), each
	// after a pause of 250 ms. A MIGRATE of 100 small keys holds its node
	// a few ms, far under MaxBlock.
	rep, err := reshard.Move(ctx, reshard.Options{From: from, To: to, KeysPerSecond: 400, Batch: 100,
		ScanCount: 1000, MaxBlock: 100 * time.Millisecond, SkipClientCheck: true, SkipVerify: true})
	require.NoError(t, err)
	took := time.Since(start)
	assert.Equal(t, int64(300), rep.Moved)
	assert.GreaterOrEqual(t, took, 600*time.Millisecond, "300 keys at 400/s")
	calls := migrateCalls(t, servers[0]) - before
	// Three batches of 100; one more if a MIGRATE was slow on a loaded
	// machine. Sized by the pauses, they shrank to a third: 7 MIGRATEs.
	assert.LessOrEqual(t, calls, 4, "MIGRATE calls for 300 keys in batches of 100")
	assert.GreaterOrEqual(t, calls, 3)
	n, err := servers[1].Do("DBSIZE")
	require.NoError(t, err)
	assert.Equal(t, "300", n)
}

// TestMoveBatchShrinksForLargeValues: a MIGRATE holds its old node until
// the new one has restored every key, so a batch of large values that
// held it past MaxBlock is followed by a smaller one. Without that, each
// MIGRATE here would carry a whole SCAN page (about 10 keys, 5 MB).
func TestMoveBatchShrinksForLargeValues(t *testing.T) {
	ctx := context.Background()
	servers, from, to := moveAll(t)
	const n = 100
	big := strings.Repeat("v", 512<<10)
	conn, err := redis.Dial("tcp", servers[0].Addr)
	require.NoError(t, err)
	for i := 0; i < n; i++ {
		require.NoError(t, conn.Send("SET", fmt.Sprintf("big:%d", i), big))
	}
	require.NoError(t, conn.Flush())
	for i := 0; i < n; i++ {
		_, err := conn.Receive()
		require.NoError(t, err)
	}
	conn.Close()
	before := migrateCalls(t, servers[0])
	rep, err := reshard.Move(ctx, reshard.Options{From: from, To: to, ScanCount: 10, MaxBlock: time.Millisecond,
		SkipClientCheck: true, SkipVerify: true})
	require.NoError(t, err)
	assert.Equal(t, int64(n), rep.Moved)
	calls := migrateCalls(t, servers[0]) - before
	require.Positive(t, calls)
	// Copying 512 KiB between two servers takes about a millisecond on
	// loopback: the batches shrink to a key or a few.
	assert.LessOrEqual(t, float64(n)/float64(calls), 5.0, "keys per MIGRATE (%d MIGRATEs for %d keys)", calls, n)
	size, err := servers[1].Do("DBSIZE")
	require.NoError(t, err)
	assert.Equal(t, fmt.Sprint(n), size)
}
