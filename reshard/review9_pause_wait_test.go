package reshard_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/reshard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview9DumpMoveAfterALeftoverPause: a DUMP/RESTORE batch that fails
// with a RESTORE unanswered, or a mover killed during a batch, leaves the
// old node's writes paused until the pause ends by itself (Timeout plus a
// second). A move run again meanwhile waits for that pause to end before
// pausing the writes itself, but its own deadlines (the old node's pause,
// the new node's restores) had started before the wait: it was left with
// the rest of them and failed its batch, here reading the DUMPs. The
// batch's clocks start once the other pause is over.
func TestReview9DumpMoveAfterALeftoverPause(t *testing.T) {
	ctx := context.Background()
	servers, from, to := moveAll(t)
	const timeout = 2 * time.Second // the pause lasts 3 s
	// A first run arms the fence: a run again finds it armed and writes
	// nothing before its first batch.
	_, err := reshard.Move(ctx, reshard.Options{From: from, To: to, SkipClientCheck: true, Dump: true, Timeout: timeout})
	require.NoError(t, err)
	const n = 2000
	for i := range n {
		_, err := servers[0].Do("SET", fmt.Sprint("left:", i), fmt.Sprint(i, ":", strings.Repeat("v", 1000)))
		require.NoError(t, err)
	}
	// What a killed mover's batch leaves: a pause of writes as long as the
	// batch's own.
	_, err = servers[0].Do("CLIENT", "PAUSE", fmt.Sprint((timeout + time.Second).Milliseconds()), "WRITE")
	require.NoError(t, err)
	rep, err := reshard.Move(ctx, reshard.Options{From: from, To: to, SkipClientCheck: true, Dump: true, Timeout: timeout,
		Batch: n})
	require.NoError(t, err)
	assert.EqualValues(t, n, rep.Moved)
	for _, i := range []int{0, n / 2, n - 1} {
		v, err := servers[1].Do("GET", fmt.Sprint("left:", i))
		require.NoError(t, err)
		assert.Equal(t, fmt.Sprint(i, ":", strings.Repeat("v", 1000)), v)
	}
}
