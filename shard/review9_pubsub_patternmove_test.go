package shard_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A ring pattern is subscribed on every shard, so a channel that moves to
// another shard (a migration, a shard ejected or restored) keeps matching
// it on both. The old shard's connection may still hold messages of the
// channel published before the move (a busy node that stalls a moment)
// when the new shard's connection delivers those published after it: the
// pattern delivered a later message of the channel before an earlier one.
func TestReview9PubSubPatternChannelMoveKeepsOrder(t *testing.T) {
	for _, tc := range []struct {
		name string
		// setup returns a client whose servers[0] carries the channels
		// moving and busy, and the move that takes moving to servers[1]
		// and keeps busy on servers[0].
		setup func(t *testing.T, servers []*redistest.Server) (c *shard.Client, moving, busy string, move func(context.Context) error)
	}{
		{"migration", func(t *testing.T, servers []*redistest.Server) (*shard.Client, string, string, func(context.Context) error) {
			from, to := archiveMigration(servers)
			c := newClient(t, from)
			return c, "y2020:seq", "y2024:busy", func(ctx context.Context) error {
				if err := c.StartMigration(ctx, to); err != nil {
					return err
				}
				return c.ArmMigration()
			}
		}},
		{"ring shard ejected", func(t *testing.T, servers []*redistest.Server) (*shard.Client, string, string, func(context.Context) error) {
			c, rr := ejectableRing(t, ringConfig(servers))
			moving := routedTo(t, rr, "y2020:seq", servers[0].Addr)
			// busy is not wanted on servers[1]: a plain channel, it
			// moves with the ejection, and its messages stay on the old
			// connection until its unsubscribe is confirmed.
			busy := routedTo(t, rr, "busy", servers[0].Addr)
			return c, moving, busy, func(context.Context) error { return rr.Eject(0) }
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			servers := redistest.StartNTB(t, 2, redistest.Options{})
			// The busy node's backlog for the subscriber stays whole.
			_, err := servers[0].Do("CONFIG", "SET", "client-output-buffer-limit", "pubsub 0 0 0")
			require.NoError(t, err)
			c, moving, busy, move := tc.setup(t, servers)
			const pattern, flood = "y2020:*", 50000
			testPatternMoveOrder(ctx, t, c, servers, pattern, moving, busy, flood, move)
		})
	}
}

func testPatternMoveOrder(ctx context.Context, t *testing.T, c *shard.Client, servers []*redistest.Server,
	pattern, moving, busy string, flood int, move func(context.Context) error) {
	sub, err := c.NewSubscription(shard.SubscriptionOptions{BufferSize: 4 * flood, PingInterval: 20 * time.Second})
	require.NoError(t, err)
	defer sub.Close()
	require.NoError(t, sub.PSubscribe(ctx, pattern))
	require.NoError(t, sub.Subscribe(ctx, busy))

	// The old node, busy: far more to deliver than the socket buffers
	// hold when the move starts (the reader is held at a pong meanwhile).
	h := shard.HoldSubscription(sub)
	require.NoError(t, h.Ping("hold"))
	floodBeforeMove(t, servers[0].Addr, "PUBLISH", busy, moving, flood)
	// It stalls a moment while the channel moves.
	require.NoError(t, servers[0].Pause())
	t.Cleanup(func() { _ = servers[0].Resume() })
	h.Release()

	require.NoError(t, move(ctx))
	// Published on the new node until the pattern is subscribed there,
	// then a few more, each after the one before returned.
	reached, seq := publishUntilReached(ctx, t, c, "PUBLISH", moving, "the pattern")
	require.NoError(t, servers[0].Resume())
	// Its confirmation comes once both shards let the pattern go: after
	// every message it delivers.
	require.NoError(t, sub.PUnsubscribe(ctx, pattern))

	got := receiveSeqs(ctx, t, sub, busy, flood, "punsubscribe", pattern, func(m redis.Message) {
		require.Equal(t, pattern, m.Pattern)
	})
	t.Logf("published 0..%d, %v reached a subscriber, delivered %v", seq, reached, fmt.Sprint(got))
	assert.Equal(t, reached, got, "every message that reached a subscriber, in publishing order, once")
	st := sub.Stats()
	assert.Zero(t, st.Lost, "the old node's connection was taken for dead")
	assert.Zero(t, st.Dropped)
}

// A pattern's messages held while the old shard's fence is awaited come
// once that shard is taken for dead, PingInterval+PingTimeout after its
// last byte, while it is still hung: never held for good.
func TestReview9PubSubPatternMoveHoldIsBounded(t *testing.T) {
	const pingInterval, pingTimeout = 200 * time.Millisecond, 300 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	c, rr := ejectableRing(t, ringConfig(servers))
	moving := routedTo(t, rr, "seq", servers[0].Addr)
	sub, err := c.NewSubscription(shard.SubscriptionOptions{PingInterval: pingInterval, PingTimeout: pingTimeout})
	require.NoError(t, err)
	defer sub.Close()
	require.NoError(t, sub.PSubscribe(ctx, "seq*"))

	require.NoError(t, servers[0].Pause()) // hung for the rest of the test
	t.Cleanup(func() { _ = servers[0].Resume() })
	require.NoError(t, rr.Eject(0))
	var sent []int
	for seq := 1; seq <= 5; seq++ {
		n, err := redis.Int(c.Do(ctx, "PUBLISH", moving, strconv.Itoa(seq)))
		require.NoError(t, err)
		require.Equal(t, 1, n, "the pattern is subscribed on the shard that takes the channel")
		sent = append(sent, seq)
	}
	start := time.Now()
	var got []int
	rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
	defer rcancel()
	for len(got) < len(sent) {
		v, err := sub.Receive(rctx)
		require.NoError(t, err, "got %v of %v while the old shard hangs", got, sent)
		if m, ok := v.(redis.Message); ok {
			i, err := strconv.Atoi(string(m.Data))
			require.NoError(t, err)
			got = append(got, i)
		}
	}
	assert.Equal(t, sent, got)
	assert.Less(t, time.Since(start), 5*time.Second, "held far longer than PingInterval+PingTimeout")
}

// A busy old shard (a long script) answers the move fence's PING with
// BUSY: it answered, so everything it sent before has been delivered, and
// the pattern's messages of the moved channel are released then, not
// held for PingInterval+PingTimeout.
func TestReview9PubSubPatternMoveBusyOldShardReleases(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	c, rr := ejectableRing(t, ringConfig(servers))
	moving := routedTo(t, rr, "seq", servers[0].Addr)
	// The hold would last a minute.
	sub, err := c.NewSubscription(shard.SubscriptionOptions{PingInterval: 30 * time.Second, PingTimeout: 30 * time.Second})
	require.NoError(t, err)
	defer sub.Close()
	require.NoError(t, sub.PSubscribe(ctx, "seq*"))
	end := busyServer(t, servers[0])
	defer end()

	require.NoError(t, rr.Eject(0))
	n, err := redis.Int(c.Do(ctx, "PUBLISH", moving, "1"))
	require.NoError(t, err)
	require.Equal(t, 1, n)
	rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
	defer rcancel()
	for {
		v, err := sub.Receive(rctx)
		require.NoError(t, err, "the message held while the busy old shard answered BUSY")
		if m, ok := v.(redis.Message); ok {
			assert.Equal(t, "1", string(m.Data))
			break
		}
	}
}
