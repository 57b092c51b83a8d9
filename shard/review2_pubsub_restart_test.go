package shard_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// While a ring shard is down: a channel unsubscribed does not come back
// when the shard restarts on the same port, a channel subscribed (the
// call fails with the node's error) is subscribed once it is back, and a
// pattern carried by every shard is subscribed on it again.
func TestReview2PubSubChangesWhileShardDown(t *testing.T) {
	servers := redistest.StartNTB(t, 1, redistest.Options{})
	c := newClient(t, ringConfig(servers))
	ctx := context.Background()
	sub, err := c.Subscribe(ctx, "r2down:gone", "r2down:kept")
	require.NoError(t, err)
	defer sub.Close()
	require.NoError(t, sub.PSubscribe(ctx, "r2down:p:*"))
	for range 3 {
		receiveWithin(t, sub, 5*time.Second)
	}

	require.NoError(t, servers[0].Kill())
	waitFor(t, 10*time.Second, "a failed redial", func() bool { return sub.Stats().DialErrors >= 1 })
	require.NoError(t, sub.Unsubscribe(ctx, "r2down:gone"))
	err = sub.Subscribe(ctx, "r2down:new")
	var ne *shard.NodeError
	require.True(t, errors.As(err, &ne), "%v", err)
	assert.Equal(t, servers[0].Addr, ne.Node.Addr)
	st := sub.Stats()
	assert.Equal(t, 2, st.Channels)
	assert.Equal(t, 1, st.Patterns)

	require.NoError(t, servers[0].Restart())
	waitFor(t, 10*time.Second, "the new channel subscribed", func() bool {
		n, err := redis.Int(c.Do(ctx, "PUBLISH", "r2down:new", "1"))
		return err == nil && n == 1
	})
	waitFor(t, 10*time.Second, "the pattern subscribed", func() bool {
		n, err := redis.Int(c.Do(ctx, "PUBLISH", "r2down:p:x", "2"))
		return err == nil && n == 1
	})
	for _, ch := range []string{"r2down:kept"} {
		n, err := redis.Int(c.Do(ctx, "PUBLISH", ch, "3"))
		require.NoError(t, err)
		assert.Equal(t, 1, n, ch)
	}
	n, err := redis.Int(c.Do(ctx, "PUBLISH", "r2down:gone", "4"))
	require.NoError(t, err)
	assert.Zero(t, n, "the channel unsubscribed while the shard was down came back")
	assert.Zero(t, numSub(t, servers[0], "NUMSUB", "r2down:gone"))

	// Received: the confirmation of the channel unsubscribed while no
	// connection carried it (at once: TestReview5PubSubUnsubscribeOfUncarriedNameIsConfirmed),
	// the new channel's confirmation, then the three messages.
	var got []any
	for len(got) < 5 {
		got = append(got, receiveWithin(t, sub, 5*time.Second))
	}
	assert.Equal(t, redis.Subscription{Kind: "unsubscribe", Channel: "r2down:gone", Count: 2}, got[0])
	got = got[1:]
	assert.Equal(t, redis.Subscription{Kind: "subscribe", Channel: "r2down:new", Count: 3}, got[0])
	assert.Equal(t, []any{
		redis.Message{Channel: "r2down:new", Data: []byte("1")},
		redis.Message{Pattern: "r2down:p:*", Channel: "r2down:p:x", Data: []byte("2")},
		redis.Message{Channel: "r2down:kept", Data: []byte("3")},
	}, got[1:])
}
