package shard_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/shard"
)

// A server that closes a subscriber for exceeding its pubsub output
// buffer limit: the subscription counts the lost connection (the only
// report of the gap, docs/pubsub.md), dials again, subscribes again, and
// what is published afterwards arrives, while the limit still holds.
// Nothing is delivered twice, and the order of what came holds.
func TestReview17PubSubOutputBufferLimitDisconnect(t *testing.T) {
	c, servers := startRing(t, 1)
	srv := servers[0]
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sub, err := c.NewSubscription(shard.SubscriptionOptions{})
	require.NoError(t, err)
	defer sub.Close()
	require.NoError(t, sub.Subscribe(ctx, "r17obl"))
	require.NoError(t, sub.PSubscribe(ctx, "r17obl:*"))
	_, err = srv.Do("CONFIG", "SET", "client-output-buffer-limit", "pubsub 1kb 1kb 0")
	require.NoError(t, err)

	// A burst far above the limit, in one transaction: the server queues
	// it for the subscriber in one go and closes the connection.
	conn, err := redis.Dial("tcp", srv.Addr)
	require.NoError(t, err)
	defer conn.Close()
	payload := strings.Repeat("x", 2048)
	require.NoError(t, conn.Send("MULTI"))
	for range 64 {
		require.NoError(t, conn.Send("PUBLISH", "r17obl", payload))
	}
	_, err = conn.Do("EXEC")
	require.NoError(t, err)
	waitFor(t, 10*time.Second, "the lost connection counted", func() bool { return sub.Stats().Lost >= 1 })
	waitFor(t, 10*time.Second, "the names subscribed again", func() bool {
		return numSub(t, srv, "NUMSUB", "r17obl") == 1 && sub.Stats().Resubscribed >= 2
	})
	// Small messages pass under the limit, through the client, on both
	// the channel and the pattern.
	for _, ch := range []string{"r17obl", "r17obl:a"} {
		n, err := redis.Int(c.Do(ctx, "PUBLISH", ch, "after"))
		require.NoError(t, err)
		require.Equal(t, 1, n, ch)
	}
	seen := map[string]int{}
	for seen["r17obl"] < 1 || seen["r17obl:a"] < 1 {
		rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
		v, err := sub.Receive(rctx)
		rcancel()
		require.NoError(t, err, "seen %v", seen)
		m, ok := v.(redis.Message)
		if !ok {
			continue
		}
		if string(m.Data) == "after" {
			seen[m.Channel]++
			continue
		}
		assert.Equal(t, payload, string(m.Data))
		assert.Zero(t, seen[m.Channel], "a message of the burst after the later one")
	}
	assert.Equal(t, map[string]int{"r17obl": 1, "r17obl:a": 1}, seen)
	st := sub.Stats()
	assert.Equal(t, 1, st.Connections)
	assert.Equal(t, 1, st.Channels)
	assert.Equal(t, 1, st.Patterns)
	assert.LessOrEqual(t, st.Received, int64(64+2))
}
