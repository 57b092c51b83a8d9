package reshard_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview13HungOldNodeInALargeMigrateFailsSoon: the wait for a
// MIGRATE grows with its bytes (a Timeout per 64 KiB, for a slow but
// live transfer), so an old node that stops (SIGSTOP) in the middle of a
// batch of two 8 MB values was waited for about 130 s at a Timeout of
// 500 ms (hours for 100 MB at the default 10 s). Once the new node has
// received nothing more of the batch for as long as a live MIGRATE may
// go without sending it anything (a Timeout per reply it still reads),
// the old node is hung: the Move must fail soon after, naming the old
// node, with ErrOldNodeStalled. (A slow live transfer is still waited
// for: TestReview12SlowMigrateOfLargeValuesIsWaitedFor.)
func TestReview13HungOldNodeInALargeMigrateFailsSoon(t *testing.T) {
	const n, size = 2, 8 << 20
	const timeout = 500 * time.Millisecond
	servers, from, to := moveAll(t)
	fillRandomValues(t, servers[0].Addr, "hg:", n, size)
	paused := make(chan error, 1)
	proxy := startSlowReplyProxy(t, servers[1].Addr, 0, func() { paused <- servers[0].Pause() })
	t.Cleanup(func() { servers[0].Resume() })
	// Without a bound of its own the Move would wait minutes: the old
	// node resumes after giveUp, and the Move then completes, late.
	const giveUp = 20 * time.Second
	resumed := time.AfterFunc(giveUp, func() { servers[0].Resume() })
	defer resumed.Stop()
	start := time.Now()
	// The proxy's fault is for the mover's MIGRATE, not the arming's probe.
	_, err := reshard.Move(context.Background(), reshard.Options{From: from, To: to, SkipClientCheck: true,
		Addrs: map[string]string{servers[1].Addr: proxy.addr}, SkipProbe: true, Timeout: timeout, Batch: n, MaxBlock: time.Minute})
	took := time.Since(start)
	require.NoError(t, <-paused, "stopping the old node")
	require.NoError(t, servers[0].Resume())
	t.Logf("after %v: %v", took, err)
	assert.Less(t, took, 12*timeout+2*time.Second, "the Move waited for a hung old node")
	require.Error(t, err)
	assert.ErrorIs(t, err, reshard.ErrOldNodeStalled)
	var ne *shard.NodeError
	if assert.True(t, errors.As(err, &ne), "a *shard.NodeError") {
		assert.Equal(t, servers[0].Addr, ne.Node.Addr, "the node named")
	}
}
