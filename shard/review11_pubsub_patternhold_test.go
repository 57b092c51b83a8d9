package shard_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A channel moves off a node that is alive but slow to reach (a
// throttled link, about 8 MB/s here), with a backlog for the subscriber:
// 55,000 messages of another channel (29 MB, under the server's default
// 32 MB output buffer limit) queued before the move, then message 0 of
// the moving channel, then the move fence's pong. A pattern's messages
// of the channel from the new node were held for PingInterval +
// PingTimeout (2 s here) from the move, not from the old node's last
// message: the hold ran out while the old node was still delivering,
// and the messages published after the move came before message 0.
func TestReview11PubSubPatternHoldOutlastsALiveBacklog(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	link := startSlowLink(t, servers[0].Addr, 8<<10, time.Millisecond)
	recent := shard.Node{Name: "recent", Addr: link}
	archive := shard.Node{Name: "archive", Addr: servers[1].Addr}
	base := ringConfig(servers[:1])
	from := shard.Config{Router: yearRouter{recent: recent, archive: recent}, Pool: base.Pool, Health: base.Health}
	to := shard.Config{Router: yearRouter{recent: recent, archive: archive}, Pool: base.Pool, Health: base.Health}
	c := newClient(t, from)

	const pattern, moving, busy, flood = "y2020:*", "y2020:seq", "y2024:busy", 55000
	sub, err := c.NewSubscription(shard.SubscriptionOptions{BufferSize: 4 * flood})
	require.NoError(t, err)
	defer sub.Close()
	require.NoError(t, sub.PSubscribe(ctx, pattern))
	require.NoError(t, sub.Subscribe(ctx, busy))

	// The backlog: queued on the old node while the move starts.
	floodBeforeMove(t, servers[0].Addr, "PUBLISH", busy, moving, flood)
	start := time.Now()
	require.NoError(t, c.StartMigration(ctx, to))
	require.NoError(t, c.ArmMigration())
	reached, seq := publishUntilReached(ctx, t, c, "PUBLISH", moving, "the pattern")
	require.NoError(t, sub.PUnsubscribe(ctx, pattern))

	got := receiveSeqs(ctx, t, sub, busy, flood, "punsubscribe", pattern, func(m redis.Message) {
		require.Equal(t, pattern, m.Pattern)
	})
	t.Logf("published 0..%d, %v reached a subscriber, delivered %v, all within %v", seq, reached, fmt.Sprint(got), time.Since(start))
	assert.Equal(t, reached, got, "every message that reached a subscriber, in publishing order, once")
	st := sub.Stats()
	assert.Zero(t, st.Lost, "the old node's connection was taken for dead")
	assert.Zero(t, st.Dropped)
}
