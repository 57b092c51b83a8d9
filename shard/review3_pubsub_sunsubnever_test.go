package shard_test

import (
	"context"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// SUnsubscribe of a shard channel that no connection carries (never
// subscribed) returns at once, sends nothing to any node, and the shard
// channels subscribed go on. Each such name is confirmed at once, as a
// server confirms it (TestReview5PubSubUnsubscribeOfUncarriedNameIsConfirmed).
func TestReview3PubSubSUnsubscribeNeverSubscribed(t *testing.T) {
	rc := clusterForTest(t)
	c := newClient(t, clusterConfig(rc.Seeds()...))
	ctx := context.Background()
	sub, err := c.SSubscribe(ctx, "r3sn:{a}")
	require.NoError(t, err)
	defer sub.Close()
	assert.Equal(t, redis.Subscription{Kind: "ssubscribe", Channel: "r3sn:{a}", Count: 1}, receiveWithin(t, sub, 5*time.Second))
	conns := sub.Stats().Connections

	uctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	require.NoError(t, sub.SUnsubscribe(uctx, "r3sn:{never}", "r3sn:{b}"))
	require.NoError(t, uctx.Err(), "returned before its ctx ended")
	st := sub.Stats()
	assert.Equal(t, 1, st.ShardChannels)
	assert.Equal(t, conns, st.Connections, "no connection dialled for it")
	assert.Zero(t, st.ServerErrors)

	// Nothing was sent: the confirmations were delivered at once, then the message.
	assert.Equal(t, redis.Subscription{Kind: "sunsubscribe", Channel: "r3sn:{never}", Count: 1}, receiveWithin(t, sub, 5*time.Second))
	assert.Equal(t, redis.Subscription{Kind: "sunsubscribe", Channel: "r3sn:{b}", Count: 1}, receiveWithin(t, sub, 5*time.Second))
	n, err := redis.Int(c.Do(ctx, "SPUBLISH", "r3sn:{a}", "m"))
	require.NoError(t, err)
	require.Equal(t, 1, n)
	assert.Equal(t, redis.Message{Channel: "r3sn:{a}", Data: []byte("m")}, receiveWithin(t, sub, 5*time.Second))
}
