package shard_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A master carrying shard channels is killed; while it is down one of
// them is unsubscribed and a new one of its slots subscribed. Once the
// replica is promoted the kept and the new channel are subscribed there
// and the unsubscribed one is not.
func TestReview2PubSubShardChannelsChangedDuringFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster and kills a master")
	}
	rc, c, masters := startFailoverCluster(t)
	ctx := context.Background()
	victim := masters[1]
	replica, err := rc.ReplicaOf(victim)
	require.NoError(t, err)
	on, _ := channelsOn(c.Router().(*shard.ClusterRouter).Table(), victim.Addr, "r2fo", 3)
	gone, kept, added := on[0], on[1], on[2]

	sub, err := c.SSubscribe(ctx, gone, kept)
	require.NoError(t, err)
	defer sub.Close()
	require.Equal(t, 1, numSub(t, victim, "SHARDNUMSUB", gone))

	require.NoError(t, victim.Kill())
	waitFor(t, 10*time.Second, "the connection lost", func() bool { return sub.Stats().Lost >= 1 })
	require.NoError(t, sub.SUnsubscribe(ctx, gone))
	sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	err = sub.SSubscribe(sctx, added)
	cancel()
	var ne *shard.NodeError
	if err != nil && !errors.As(err, &ne) {
		t.Fatalf("SSubscribe while the master is down: %v", err)
	}

	for _, ch := range []string{kept, added} {
		waitFor(t, 30*time.Second, ch+" subscribed on the promoted replica", func() bool {
			n, err := redis.Int(c.Do(ctx, "SPUBLISH", ch, ch))
			return err == nil && n == 1
		})
	}
	n, err := redis.Int(c.Do(ctx, "SPUBLISH", gone, "x"))
	require.NoError(t, err)
	assert.Zero(t, n, "the channel unsubscribed while its master was down came back")
	assert.Zero(t, numSub(t, replica, "SHARDNUMSUB", gone))
	assert.Equal(t, 1, numSub(t, replica, "SHARDNUMSUB", kept))
	st := sub.Stats()
	assert.Equal(t, 2, st.ShardChannels)
}
