package shard_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// A slot whose migration is finished on its source before its target
// (CLUSTER SETSLOT NODE given in that order, or the target's step delayed
// or failed): the source answers SSUBSCRIBE with MOVED to the target,
// which, still importing, answers MOVED back to the source. The
// subscription must not bounce its shard channel between the two as fast
// as they answer for as long as that lasts, and must be at the target once
// the target takes the slot.
func TestReview17PubSubMovedBackAndForthIsPaced(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster")
	}
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	c := newClient(t, clusterConfig(rc.Seeds()...))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	masters := rc.Masters()
	require.Len(t, masters, 3)
	from, to := masters[0], masters[1]
	var name string
	for i := 0; ; i++ {
		name = fmt.Sprintf("r17pp:%d", i)
		if cluster.Slot(name) < 5000 { // the first master owns 0-5460
			break
		}
	}
	slot := fmt.Sprint(cluster.Slot(name))
	sub, err := c.NewSubscription(shard.SubscriptionOptions{})
	require.NoError(t, err)
	defer sub.Close()
	require.NoError(t, sub.SSubscribe(ctx, name))
	require.Equal(t, 1, numSub(t, from, "SHARDNUMSUB", name))

	fromID, toID := nodeID(t, from), nodeID(t, to)
	_, err = to.Do("CLUSTER", "SETSLOT", slot, "IMPORTING", fromID)
	require.NoError(t, err)
	_, err = from.Do("CLUSTER", "SETSLOT", slot, "MIGRATING", toID)
	require.NoError(t, err)
	_, err = from.Do("CLUSTER", "SETSLOT", slot, "NODE", toID)
	require.NoError(t, err)
	waitFor(t, 10*time.Second, "the source to drop the shard channel", func() bool {
		return numSub(t, from, "SHARDNUMSUB", name) == 0
	})
	// Twenty MOVED replies: sent again at once, they come within a few
	// round trips; paced, they take a second or so.
	before, start := sub.Stats().Moved, time.Now()
	waitFor(t, 20*time.Second, "twenty MOVED replies", func() bool { return sub.Stats().Moved-before >= 20 })
	took := time.Since(start)
	t.Logf("20 MOVED replies while source and target disagree took %v", took)
	assert.Greater(t, took, 500*time.Millisecond, "the shard channel bounced between the two nodes as fast as they answered")

	_, err = to.Do("CLUSTER", "SETSLOT", slot, "NODE", toID)
	require.NoError(t, err)
	for _, m := range masters[2:] {
		_, err = m.Do("CLUSTER", "SETSLOT", slot, "NODE", toID)
		require.NoError(t, err)
	}
	waitFor(t, 10*time.Second, "the shard channel at the target", func() bool {
		return numSub(t, to, "SHARDNUMSUB", name) == 1
	})
	n, err := redis.Int(c.Do(ctx, "SPUBLISH", name, "after"))
	require.NoError(t, err)
	require.Equal(t, 1, n)
	for {
		rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
		v, err := sub.Receive(rctx)
		rcancel()
		require.NoError(t, err)
		if m, ok := v.(redis.Message); ok {
			assert.Equal(t, "after", string(m.Data))
			break
		}
	}
	assert.Equal(t, 1, sub.Stats().ShardChannels)
}
