package reshard

import (
	"context"
	"crypto/rand"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard"
)

// TestReview13HungOldNodeInAKeyByKeyMigrateFailsSoon: after a batch met
// BUSYKEY, migrateEach moves its keys one MIGRATE each, each waited for
// by its key's size (a Timeout per 64 KiB: about 130 s for 16 MB at a
// Timeout of 500 ms). An old node that stops (SIGSTOP) in the middle of
// such a MIGRATE must be found out by the stall watch, as in a batch
// (TestReview13HungOldNodeInALargeMigrateFailsSoon): migrateEach must
// fail soon, with ErrOldNodeStalled naming the old node, and count
// nothing as moved.
func TestReview13HungOldNodeInAKeyByKeyMigrateFailsSoon(t *testing.T) {
	const size = 16 << 20
	const timeout = 500 * time.Millisecond
	ctx := context.Background()
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	oldSrv, newSrv := servers[0], servers[1]
	value := make([]byte, size)
	_, err := rand.Read(value) // random: DUMP's payload is not compressed away
	require.NoError(t, err)

	// The old node stops as soon as its MIGRATE starts sending.
	var once sync.Once
	paused := make(chan error, 1)
	proxy := redistest.StartProxy(t, newSrv.Addr, redistest.ProxyOptions{OnSend: func([]byte) bool {
		once.Do(func() { paused <- oldSrv.Pause() })
		return true
	}})
	t.Cleanup(func() { oldSrv.Resume() })

	from, err := shard.ParseURL("redis-ring://" + oldSrv.Addr + "?names=a&health_interval=-1s")
	require.NoError(t, err)
	to, err := shard.ParseURL("redis-ring://" + newSrv.Addr + "?names=b&health_interval=-1s")
	require.NoError(t, err)
	pools, err := pool.NewSet(moverPool(to.Pool))
	require.NoError(t, err)
	defer pools.Close()
	m := &mover{opts: Options{From: from, To: to, Timeout: timeout, Addrs: map[string]string{newSrv.Addr: proxy.Addr}}.withDefaults(),
		pools: pools, flows: map[[2]string]*Flow{}, limit: newLimiter(0, 0)}
	src := shard.Node{Name: "a", Addr: oldSrv.Addr}
	dst := shard.Node{Name: "b", Addr: newSrv.Addr}
	conn, err := pools.Get(ctx, src.Addr)
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.Do("SET", "each:big", value)
	require.NoError(t, err)
	sizes, err := m.measure(ctx, conn, src, []string{"each:big"})
	require.NoError(t, err)
	require.Len(t, sizes, 1)
	require.Greater(t, sizes[0], int64(size), "MEMORY USAGE of the value")
	require.Greater(t, m.migrateWait(sizes[0]), m.stallAfter(1)+m.stallPoll(), "a wait the watch shortens")

	// Without a bound of its own the MIGRATE would be waited for about
	// two minutes: the old node resumes after giveUp, and migrateEach
	// then ends, late.
	const giveUp = 20 * time.Second
	resumed := time.AfterFunc(giveUp, func() { oldSrv.Resume() })
	defer resumed.Stop()
	start := time.Now()
	moved, err := m.migrateEach(ctx, conn, src, dst, []string{"each:big"}, sizes)
	took := time.Since(start)
	require.NoError(t, <-paused, "stopping the old node")
	require.NoError(t, oldSrv.Resume())
	t.Logf("after %v: %v", took, err)
	assert.Less(t, took, 12*timeout+2*time.Second, "migrateEach waited for a hung old node")
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrOldNodeStalled)
	var ne *shard.NodeError
	if assert.True(t, errors.As(err, &ne), "a *shard.NodeError: %T", err) {
		assert.Equal(t, oldSrv.Addr, ne.Node.Addr, "the node named")
	}
	assert.Zero(t, moved, "keys counted as moved")
}
