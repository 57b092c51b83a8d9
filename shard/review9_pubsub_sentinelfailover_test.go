package shard_test

import (
	"context"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A Sentinel shard's subscription connection stayed on the old master
// after a failover that left it running (a manual failover, a partition
// that healed): the old master, now a replica, still answers, so nothing
// took the connection for lost. Channels kept working through
// replication, but keyspace events did not: the new master was never
// configured (CONFIG SET notify-keyspace-events) nor subscribed, and the
// events only it emits (a key that expires there) were lost for good.
func TestReview9PubSubSentinelFailoverMovesTheSubscription(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	set := redistest.StartSentinelsTB(t, sentinelSetOptions(1))
	cfg := sentinelConfig(set)
	cfg.Sentinel.RefreshInterval = 200 * time.Millisecond
	c := newClient(t, cfg)

	sub, err := c.SubscribeKeyspace(ctx, shard.KeyspaceOptions{Patterns: []string{"__keyevent@*__:expired"}, Enable: "Ex"})
	require.NoError(t, err)
	defer sub.Close()
	expired := func(key string) {
		t.Helper()
		_, err := c.Do(ctx, "SET", key, "v", "PX", 100)
		require.NoError(t, err)
		rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
		defer rcancel()
		for {
			v, err := sub.Receive(rctx)
			require.NoError(t, err, "no expired event for %s", key)
			if m, ok := v.(redis.Message); ok && string(m.Data) == key {
				return
			}
		}
	}
	expired("before")

	next, err := set.Replica(0)
	require.NoError(t, err)
	waitFor(t, 60*time.Second, "a manual failover to be accepted", func() bool {
		_, err := set.Sentinels[0].Do("SENTINEL", "FAILOVER", set.Shards[0].Name)
		return err == nil
	})
	waitFor(t, 60*time.Second, "the client to follow the failover", func() bool {
		return c.Stats().Sentinel[0].Master == next.Addr
	})
	expired("after")
	assert.Positive(t, sub.Stats().Resubscribed, "subscribed again at the new master")
}
