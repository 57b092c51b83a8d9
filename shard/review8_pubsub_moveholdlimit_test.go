package shard_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The new connection of a moving channel holds its messages back until
// the old one lets the channel go (TestReview8PubSubChannelMoveKeepsOrder);
// an old node that hangs and never does must not hold them for good: they
// come once it is taken for dead, PingInterval+PingTimeout after its last
// byte, while it is still hung, in order and none lost.
func TestReview8PubSubChannelMoveHoldIsBounded(t *testing.T) {
	const pingInterval, pingTimeout = 200 * time.Millisecond, 300 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	from, to := archiveMigration(servers)
	c := newClient(t, from)
	const moving = "y2020:seq"
	sub, err := c.NewSubscription(shard.SubscriptionOptions{PingInterval: pingInterval, PingTimeout: pingTimeout})
	require.NoError(t, err)
	defer sub.Close()
	require.NoError(t, sub.Subscribe(ctx, moving, "y2024:stays"))

	pauseUntilCleanup(t, servers[0]) // hung for the rest of the test
	require.NoError(t, c.StartMigration(ctx, to))
	require.NoError(t, c.ArmMigration())
	var reached []int
	for seq := 1; len(reached) < 5; seq++ {
		require.NoError(t, ctx.Err(), "the subscriber never appeared on the new node")
		n, err := redis.Int(c.Do(ctx, "PUBLISH", moving, strconv.Itoa(seq)))
		require.NoError(t, err)
		if n == 1 {
			reached = append(reached, seq)
		}
	}
	start := time.Now()
	var got []int
	rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
	defer rcancel()
	for len(got) < len(reached) {
		v, err := sub.Receive(rctx)
		require.NoError(t, err, "got %v of %v while the old node hangs", got, reached)
		if m, ok := v.(redis.Message); ok {
			i, err := strconv.Atoi(string(m.Data))
			require.NoError(t, err)
			got = append(got, i)
		}
	}
	assert.Equal(t, reached, got)
	assert.Less(t, time.Since(start), 5*time.Second, "held far longer than PingInterval+PingTimeout")
	assert.Positive(t, sub.Stats().Lost, "the hung node's connection taken for dead")
}
