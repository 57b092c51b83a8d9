package shard_test

import (
	"context"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSSubscribeFollowsMOVED gives the client a stale slot table: the
// SSUBSCRIBE goes to the wrong master, which answers MOVED, and the
// subscription subscribes at the owner on its own. PUBLISH through Do in
// cluster mode meets a classic subscription on any master.
func TestSSubscribeFollowsMOVED(t *testing.T) {
	rc := clusterForTest(t)
	cfg := clusterConfig(rc.Seeds()...)
	cfg.Cluster.RefreshInterval = -1
	c := newClient(t, cfg)
	ctx := context.Background()
	channel := "moved:{chan}"
	slot := cluster.Slot(channel)
	owner, err := rc.MasterOfSlot(slot)
	require.NoError(t, err)
	other, err := rc.OtherMaster(owner)
	require.NoError(t, err)
	wrong := other.Addr
	shard.PointSlotAt(c, slot, wrong)
	require.Equal(t, wrong, c.Router().(*shard.ClusterRouter).Table().Master(slot).Addr)

	sub, err := c.SSubscribe(ctx, channel)
	require.NoError(t, err)
	defer sub.Close()
	assert.Equal(t, 1, numSub(t, owner, "SHARDNUMSUB", channel), "subscribed at the slot's owner")
	assert.Positive(t, sub.Stats().Moved)
	n, err := redis.Int(c.Do(ctx, "SPUBLISH", channel, "hi"))
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	assert.IsType(t, redis.Subscription{}, receiveWithin(t, sub, 5*time.Second))
	assert.Equal(t, redis.Message{Channel: channel, Data: []byte("hi")}, receiveWithin(t, sub, 5*time.Second))

	classic, err := c.Subscribe(ctx, "moved:classic")
	require.NoError(t, err)
	defer classic.Close()
	_ = receiveWithin(t, classic, 5*time.Second)
	for _, ch := range []string{"a", "b", "c", "d", "e", "f"} { // at the slot's master, which broadcasts
		_, err := c.Do(ctx, "PUBLISH", "moved:classic", ch)
		require.NoError(t, err)
	}
	for _, ch := range []string{"a", "b", "c", "d", "e", "f"} {
		m := receiveWithin(t, classic, 5*time.Second).(redis.Message)
		assert.Equal(t, ch, string(m.Data))
	}
}
