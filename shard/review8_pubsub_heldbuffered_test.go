package shard_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// TestReview8PubSubHeldMessagesAreBuffered: the messages a new connection
// holds back while their channel moves (until the old node lets it go)
// are waiting for the application, but Buffered and Stats().Buffered did
// not count them: a program watching its backlog saw none.
func TestReview8PubSubHeldMessagesAreBuffered(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	from, to := archiveMigration(servers)
	c := newClient(t, from)
	const moving = "y2020:held"
	// Long pings: the old node, paused, is not taken for dead while the
	// test looks; the hold ends when it is resumed and lets the channel go.
	sub, err := c.NewSubscription(shard.SubscriptionOptions{PingInterval: 20 * time.Second, PingTimeout: 20 * time.Second})
	require.NoError(t, err)
	defer sub.Close()
	require.NoError(t, sub.Subscribe(ctx, moving))

	require.NoError(t, servers[0].Pause())
	resumed := false
	t.Cleanup(func() {
		if !resumed {
			_ = servers[0].Resume()
		}
	})
	require.NoError(t, c.StartMigration(ctx, to))
	require.NoError(t, c.ArmMigration())
	var reached []int
	for seq := 1; len(reached) < 3; seq++ {
		require.NoError(t, ctx.Err(), "the subscriber never appeared on the new node")
		n, err := redis.Int(c.Do(ctx, "PUBLISH", moving, strconv.Itoa(seq)))
		require.NoError(t, err)
		if n == 1 {
			reached = append(reached, seq)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for sub.Buffered() < len(reached) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	require.Equal(t, len(reached), sub.Buffered(), "messages held back while the channel moves are waiting for the application")
	require.Equal(t, len(reached), sub.Stats().Buffered)

	require.NoError(t, servers[0].Resume())
	resumed = true
	var got []int
	for len(got) < len(reached) {
		v, err := sub.Receive(ctx)
		require.NoError(t, err, "got %v of %v", got, reached)
		if m, ok := v.(redis.Message); ok {
			i, err := strconv.Atoi(string(m.Data))
			require.NoError(t, err)
			got = append(got, i)
		}
	}
	assert.Equal(t, reached, got)
	assert.Zero(t, sub.Buffered())
}
