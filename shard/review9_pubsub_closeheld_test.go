package shard_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// A closed subscription buffers nothing: the messages it held back while
// their channel moved are gone with it, and Buffered says 0, as it does
// for the messages it had queued.
func TestReview9PubSubClosedSubscriptionBuffersNothing(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	c, rr := ejectableRing(t, ringConfig(servers))
	moving := routedTo(t, rr, "held", servers[0].Addr)
	// The hold would last a minute: the old shard never answers.
	sub, err := c.NewSubscription(shard.SubscriptionOptions{PingInterval: 30 * time.Second, PingTimeout: 30 * time.Second})
	require.NoError(t, err)
	defer sub.Close()
	require.NoError(t, sub.PSubscribe(ctx, "held*"))
	require.NoError(t, servers[0].Pause())
	t.Cleanup(func() { _ = servers[0].Resume() })
	require.NoError(t, rr.Eject(0))
	const sent = 3
	for seq := 1; seq <= sent; seq++ {
		n, err := redis.Int(c.Do(ctx, "PUBLISH", moving, strconv.Itoa(seq)))
		require.NoError(t, err)
		require.Equal(t, 1, n)
	}
	waitFor(t, 10*time.Second, "the published messages to be held", func() bool { return sub.Buffered() == sent })
	require.NoError(t, sub.Close())
	require.Equal(t, 0, sub.Buffered(), "a closed subscription still counts messages")
}
