package shard_test

import (
	"context"
	"math/rand/v2"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/shard"
)

// A SlotMap hook that uses the subscription whose MOVED it reports: the
// subscription's reader applied the MOVED, and so ran the hook, while it
// held the subscription's lock. The hook's Ping waited for that lock
// until its ctx ended (a hook without a deadline hung the subscription
// for good), and no connection of the subscription read meanwhile.
func TestReview13SubscriptionMovedHookUsesSubscription(t *testing.T) {
	rc := clusterForTest(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	var (
		subp   atomic.Pointer[shard.Subscription]
		armed  atomic.Bool
		called atomic.Int32
		pinged = make(chan error, 16)
	)
	cfg := clusterConfig(rc.Seeds()...)
	cfg.Cluster.RefreshInterval = -1
	cfg.Hooks = &shard.Hooks{SlotMap: func(shard.SlotMapEvent) {
		sub := subp.Load()
		if !armed.Load() || sub == nil {
			return
		}
		called.Add(1)
		hctx, hcancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer hcancel()
		pinged <- sub.Ping(hctx, "from-hook")
	}}
	c := newClient(t, cfg)

	tag := strconv.FormatUint(rand.Uint64(), 36)
	first := "r13hook:a{" + tag + "a}"
	second := "r13hook:b{" + tag + "b}"
	sub, err := c.SSubscribe(ctx, first)
	require.NoError(t, err)
	defer sub.Close()
	subp.Store(sub)

	slot := cluster.Slot(second)
	owner, err := rc.MasterOfSlot(slot)
	require.NoError(t, err)
	other, err := rc.OtherMaster(owner)
	require.NoError(t, err)
	shard.PointSlotAt(c, slot, other.Addr) // stale: the SSUBSCRIBE meets a MOVED
	armed.Store(true)

	start := time.Now()
	require.NoError(t, sub.SSubscribe(ctx, second))
	took := time.Since(start)
	require.Positive(t, called.Load(), "the MOVED was reported to the SlotMap hook")
	select {
	case err := <-pinged:
		require.NoError(t, err, "the hook's Ping on the subscription")
	case <-time.After(5 * time.Second):
		t.Fatal("the hook's Ping did not return")
	}
	require.Less(t, took, 1500*time.Millisecond, "SSubscribe waited for the hook's Ping to time out")
	require.Equal(t, 1, numSub(t, owner, "SHARDNUMSUB", second))
}
