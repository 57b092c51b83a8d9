package shard_test

import (
	"context"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSubscribeWithAUsersRouterFollowsAMigration: with the user's own
// Router, a channel lives where that router places its name, so PUBLISH
// and SUBSCRIBE meet; when the client starts routing by another topology
// (a migration), the subscription moves the channel to its new node and
// messages published there arrive.
func TestSubscribeWithAUsersRouterFollowsAMigration(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	from, to := archiveMigration(servers)
	c := newClient(t, from)
	sub, err := c.Subscribe(ctx, "y2020:news", "y2024:news")
	require.NoError(t, err)
	defer sub.Close()

	// publishUntilReceived publishes on channel until the subscription
	// delivers one of those messages (the subscription may still be moving).
	publishUntilReceived := func(channel, payload string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			_, err := c.Do(ctx, "PUBLISH", channel, payload)
			require.NoError(t, err)
			rctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
			for {
				v, err := sub.Receive(rctx)
				if err != nil {
					break
				}
				if m, ok := v.(redis.Message); ok && m.Channel == channel && string(m.Data) == payload {
					cancel()
					return
				}
			}
			cancel()
		}
		t.Fatalf("no message on %s within 10 s", channel)
	}
	publishUntilReceived("y2020:news", "before")
	publishUntilReceived("y2024:news", "before")
	assert.Equal(t, 2, channelSubscribers(t, servers[0], "y2020:news", "y2024:news"))

	require.NoError(t, c.StartMigration(ctx, to))
	require.NoError(t, c.ArmMigration())
	waitFor(t, 10*time.Second, "y2020:news to move to the archive node", func() bool {
		return channelSubscribers(t, servers[1], "y2020:news") == 1 && channelSubscribers(t, servers[0], "y2020:news") == 0
	})
	publishUntilReceived("y2020:news", "after")
	publishUntilReceived("y2024:news", "after")
}

// channelSubscribers sums PUBSUB NUMSUB of the channels on one server.
func channelSubscribers(t *testing.T, s *redistest.Server, channels ...string) int {
	t.Helper()
	conn, err := redis.Dial("tcp", s.Addr)
	require.NoError(t, err)
	defer conn.Close()
	args := redis.Args{"NUMSUB"}.AddFlat(channels)
	vals, err := redis.Values(conn.Do("PUBSUB", args...))
	require.NoError(t, err)
	require.Len(t, vals, 2*len(channels))
	n := 0
	for i := 1; i < len(vals); i += 2 {
		k, err := redis.Int(vals[i], nil)
		require.NoError(t, err)
		n += k
	}
	return n
}
