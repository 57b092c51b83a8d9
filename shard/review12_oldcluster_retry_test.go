package shard_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// plainStats returns c's statistics of the node at addr as a master
// (not its read-only entry).
func plainStats(c *shard.Client, addr string) (shard.NodeStats, bool) {
	for _, ns := range nodeStats(c, addr) {
		if !ns.ReadOnly {
			return ns, true
		}
	}
	return shard.NodeStats{}, false
}

// An MGET routed by the old cluster while the client waits, of two keys
// of a slot half moved there (one key moved, one not): the old owner
// answers TRYAGAIN. It is sent again to the old cluster, never to the
// client's own, which holds other values under the same keys; it ends
// with a *RetryError after MaxRetryWait, or with the old cluster's values
// once the slot has moved.
func TestReview12OldClusterTryAgainRetriesThere(t *testing.T) {
	ctx := oldClusterContext(t, 90*time.Second)
	const maxWait = 2 * time.Second
	old, c, _, onNew := oldClusterWaiting(t, maxWait)
	tag := strconv.FormatUint(rand.Uint64(), 36)
	a, b := "r12tryagain:{"+tag+"}:a", "r12tryagain:{"+tag+"}:b"
	t.Cleanup(func() { _, _ = onNew.Do(context.Background(), "DEL", a, b) })
	_, err := onNew.Do(ctx, "MSET", a, "new-a", b, "new-b")
	require.NoError(t, err)
	_, err = c.Do(ctx, "MSET", a, "old-a", b, "old-b")
	require.NoError(t, err)

	owner, dst := halfMove(t, old, a, b)
	_, err = owner.Do("MGET", a, b)
	require.Error(t, err)
	require.Contains(t, err.Error(), "TRYAGAIN", "the old owner refuses the half-moved slot")

	start := time.Now()
	v, err := c.Do(ctx, "MGET", a, b)
	took := time.Since(start)
	require.Error(t, err, "MGET answered %v", v)
	var re *shard.RetryError
	require.True(t, errors.As(err, &re), "%T: %v", err, err)
	assert.ErrorIs(t, err, shard.ErrRetryBudget)
	assert.Contains(t, re.Last, "TRYAGAIN")
	assert.GreaterOrEqual(t, took, maxWait/2, "gave up too early")
	assert.Less(t, took, maxWait+5*time.Second, "gave up too late")
	st, ok := plainStats(c, owner.Addr)
	require.True(t, ok, "the old owner in Stats")
	assert.GreaterOrEqual(t, st.TryAgain, int64(2), "the retries went to the old owner")

	// Again, and the slot finishes its move meanwhile: the MGET reads the
	// old cluster's values at the slot's new owner there.
	type result struct {
		v   any
		err error
	}
	done := make(chan result, 1)
	before := st.TryAgain
	go func() {
		v, err := c.Do(ctx, "MGET", a, b)
		done <- result{v, err}
	}()
	waitFor(t, 10*time.Second, "a TRYAGAIN retried", func() bool {
		st, _ := plainStats(c, owner.Addr)
		return st.TryAgain >= before+2
	})
	_, err = redistest.MoveSlot(ctx, cluster.Slot(a), owner, dst, old.Masters(), redistest.SlotMoveOptions{})
	require.NoError(t, err)
	var r result
	select {
	case r = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the MGET did not end")
	}
	require.NoError(t, r.err)
	got, err := redis.Strings(r.v, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"old-a", "old-b"}, got)
}

// A GET routed by the old cluster while the client waits, at a node that
// answers CLUSTERDOWN (the slot is served by no node in its view): it is
// sent again to that node, never to the client's own cluster, which
// holds another value under the key; it ends with a *RetryError after
// MaxRetryWait, or with the old cluster's value once the slot is served
// again. An SSUBSCRIBE there is refused with a *NodeError and sent
// again, to the old cluster, once the slot is served.
func TestReview12OldClusterClusterDownRetriesThere(t *testing.T) {
	ctx := oldClusterContext(t, 90*time.Second)
	const maxWait = 2 * time.Second
	old, c, onOld, onNew := oldClusterWaiting(t, maxWait)
	tag := strconv.FormatUint(rand.Uint64(), 36)
	key, sch := "r12down:{"+tag+"}", "r12downs:{"+tag+"}"
	t.Cleanup(func() { _, _ = onNew.Do(context.Background(), "DEL", key) })
	_, err := onNew.Do(ctx, "SET", key, "new")
	require.NoError(t, err)
	_, err = c.Do(ctx, "SET", key, "old")
	require.NoError(t, err)
	owner, _ := ownerAndOther(t, old, key)
	slot := strconv.Itoa(cluster.Slot(key))

	_, err = owner.Do("CLUSTER", "DELSLOTS", slot)
	require.NoError(t, err)
	_, err = owner.Do("GET", key)
	require.Error(t, err)
	require.Contains(t, err.Error(), "CLUSTERDOWN", "the old owner serves the slot no more")

	start := time.Now()
	v, err := c.Do(ctx, "GET", key)
	took := time.Since(start)
	require.Error(t, err, "GET answered %v", v)
	var re *shard.RetryError
	require.True(t, errors.As(err, &re), "%T: %v", err, err)
	assert.ErrorIs(t, err, shard.ErrRetryBudget)
	assert.Contains(t, re.Last, "CLUSTERDOWN")
	assert.GreaterOrEqual(t, took, maxWait/2, "gave up too early")
	assert.Less(t, took, maxWait+5*time.Second, "gave up too late")
	st, ok := plainStats(c, owner.Addr)
	require.True(t, ok, "the old owner in Stats")
	assert.GreaterOrEqual(t, st.Retries, int64(2), "the retries went to the old owner")

	sub, err := c.NewSubscription(shard.SubscriptionOptions{})
	require.NoError(t, err)
	defer sub.Close()
	err = sub.SSubscribe(ctx, sch)
	require.Error(t, err, "SSUBSCRIBE where the slot is not served")
	var ne *shard.NodeError
	require.True(t, errors.As(err, &ne), "%T: %v", err, err)
	assert.Equal(t, owner.Addr, ne.Node.Addr)
	assert.Contains(t, err.Error(), "CLUSTERDOWN")

	type result struct {
		v   any
		err error
	}
	done := make(chan result, 1)
	before := st.Retries
	go func() {
		v, err := c.Do(ctx, "GET", key)
		done <- result{v, err}
	}()
	waitFor(t, 10*time.Second, "a CLUSTERDOWN retried", func() bool {
		st, _ := plainStats(c, owner.Addr)
		return st.Retries >= before+2
	})
	_, err = owner.Do("CLUSTER", "ADDSLOTS", slot)
	require.NoError(t, err)
	var r result
	select {
	case r = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the GET did not end")
	}
	require.NoError(t, r.err)
	got, err := redis.String(r.v, nil)
	require.NoError(t, err)
	assert.Equal(t, "old", got)

	waitFor(t, 10*time.Second, "the shard channel at its owner on the old cluster", func() bool {
		return numSub(t, owner, "SHARDNUMSUB", sch) == 1
	})
	n, err := redis.Int(onOld.Do(ctx, "SPUBLISH", sch, "back"))
	require.NoError(t, err)
	require.Equal(t, 1, n)
	m, err := nextMessage(sub, 10*time.Second)
	require.NoError(t, err)
	assert.Equal(t, "back", string(m.Data))
}
