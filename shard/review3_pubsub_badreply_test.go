package shard_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A reply that a connection in subscribe mode cannot have sent (here a
// confirmation whose count is a string) is reported by Receive as a
// *SubscribeError wrapping ErrPubSubReply. It named neither the command
// whose reply was awaited nor its names, and its documentation said the
// names had left the subscription, while they stay and are subscribed
// again on a new connection.
func TestReview3PubSubBadReplyNamesItsCommand(t *testing.T) {
	f := startFake(t, func(conn int, cmd []string) string {
		switch {
		case cmd[0] == "SUBSCRIBE" && conn == 1:
			return "*3\r\n$9\r\nsubscribe\r\n$" + fmt.Sprint(len(cmd[1])) + "\r\n" + cmd[1] + "\r\n$1\r\n1\r\n"
		case cmd[0] == "SUBSCRIBE":
			return subscribedReply(cmd[1])
		case cmd[0] == "PING":
			return pongReply(cmd[1])
		}
		return "-ERR unexpected\r\n"
	})
	c := f.client(t)
	ctx := context.Background()
	sub, err := c.NewSubscription(shard.SubscriptionOptions{})
	require.NoError(t, err)
	defer sub.Close()
	err = sub.Subscribe(ctx, "r3bad")
	var ne *shard.NodeError
	require.ErrorAs(t, err, &ne, "the Subscribe call learns that the node failed")
	require.ErrorIs(t, err, shard.ErrPubSubReply)

	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, err = sub.Receive(rctx)
	var se *shard.SubscribeError
	require.ErrorAs(t, err, &se)
	assert.True(t, errors.Is(err, shard.ErrPubSubReply), "%v", err)
	assert.Equal(t, "SUBSCRIBE", se.Command)
	assert.Equal(t, []string{"r3bad"}, se.Names)
	assert.Equal(t, f.addr(), se.Node.Addr)

	// The name stayed, and is confirmed on the next connection.
	v, err := sub.Receive(rctx)
	require.NoError(t, err)
	assert.Equal(t, redis.Subscription{Kind: "subscribe", Channel: "r3bad", Count: 1}, v)
	assert.Equal(t, 1, sub.Stats().Channels)
}
