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

// An UNSUBSCRIBE that a busy node refuses (BUSY) left the channel
// subscribed on the node for good, delivering messages the application
// had unsubscribed from: it is sent again once the node can serve.
func TestReview2PubSubUnsubscribeRefusedByBusyNode(t *testing.T) {
	c, sub, servers := quietSubscription(t, 1)
	ctx := context.Background()
	defer sub.Close()
	require.NoError(t, sub.Subscribe(ctx, "r2bu:gone", "r2bu:keep"))
	require.NoError(t, sub.PSubscribe(ctx, "r2bu:p:*"))
	for range 3 {
		receiveWithin(t, sub, 5*time.Second)
	}
	end := busyServer(t, servers[0])
	require.NoError(t, sub.Unsubscribe(ctx, "r2bu:gone"))
	require.NoError(t, sub.PUnsubscribe(ctx, "r2bu:p:*"))
	// Both are answered BUSY.
	waitFor(t, 10*time.Second, "the refusals", func() bool { return sub.Stats().ServerErrors >= 2 })
	end()

	waitFor(t, 10*time.Second, "the channel unsubscribed on the node", func() bool {
		return numSub(t, servers[0], "NUMSUB", "r2bu:gone") == 0
	})
	waitFor(t, 10*time.Second, "the pattern unsubscribed on the node", func() bool {
		out, err := servers[0].Do("PUBSUB", "NUMPAT")
		return err == nil && out == "0"
	})
	n, err := redis.Int(c.Do(ctx, "PUBLISH", "r2bu:keep", "k"))
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	// The refusals were delivered as errors; then the message.
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	for {
		v, err := sub.Receive(rctx)
		var se *shard.SubscribeError
		if errors.As(err, &se) {
			assert.Contains(t, []string{"UNSUBSCRIBE", "PUNSUBSCRIBE"}, se.Command)
			continue
		}
		require.NoError(t, err)
		if m, ok := v.(redis.Message); ok {
			assert.Equal(t, redis.Message{Channel: "r2bu:keep", Data: []byte("k")}, m)
			break
		}
	}
	assert.Equal(t, 1, sub.Stats().Connections)
}
