package shard_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// docs/pubsub.md promises the messages of one channel in publishing
// order. While a channel moves to another node (a migration, a shard
// ejected or restored), two connections carry it for a moment: the old
// one may still hold messages published before the move (a busy node, its
// socket full of other channels' messages, that stalls a moment) when the
// new one delivers the first messages published after it. The new
// connection delivered them at once, before the older ones: a later
// message of the channel came before an earlier one.
func TestReview8PubSubChannelMoveKeepsOrder(t *testing.T) {
	for _, tc := range []struct {
		name              string
		subscribe         func(*shard.Subscription, context.Context, ...string) error
		unsubscribe       func(*shard.Subscription, context.Context, ...string) error
		publish, unsubbed string
	}{
		{"channel", (*shard.Subscription).Subscribe, (*shard.Subscription).Unsubscribe, "PUBLISH", "unsubscribe"},
		{"shard channel", (*shard.Subscription).SSubscribe, (*shard.Subscription).SUnsubscribe, "SPUBLISH", "sunsubscribe"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			servers := redistest.StartNTB(t, 2, redistest.Options{})
			// The busy node's backlog for the subscriber stays whole.
			_, err := servers[0].Do("CONFIG", "SET", "client-output-buffer-limit", "pubsub 0 0 0")
			require.NoError(t, err)
			from, to := archiveMigration(servers)
			c := newClient(t, from)

			const moving, busy, flood = "y2020:seq", "y2024:busy", 50000
			// Health PINGs rare enough not to take the stalled node for dead.
			sub, err := c.NewSubscription(shard.SubscriptionOptions{BufferSize: 4 * flood, PingInterval: 20 * time.Second})
			require.NoError(t, err)
			defer sub.Close()
			require.NoError(t, tc.subscribe(sub, ctx, moving, busy))

			// The old node, busy: its connection has far more to deliver
			// than the socket buffers hold when the move starts. (The
			// subscription's reader is held at a pong meanwhile, so that
			// how fast it reads does not matter.)
			h := shard.HoldSubscription(sub)
			require.NoError(t, h.Ping("hold"))
			floodBeforeMove(t, servers[0].Addr, tc.publish, busy, moving, flood)
			// It stalls a moment (a slow fork, say) while the channel
			// moves: what it had not written yet comes after the move.
			pauseUntilCleanup(t, servers[0])
			h.Release()

			require.NoError(t, c.StartMigration(ctx, to))
			require.NoError(t, c.ArmMigration())
			// Published on the new node until it has the subscriber, then
			// a few more: each is published after the one before returned.
			reached, seq := publishUntilReached(ctx, t, c, tc.publish, moving, "the subscriber")
			require.NoError(t, servers[0].Resume())
			// Its confirmation comes after every message of the channel.
			require.NoError(t, tc.unsubscribe(sub, ctx, moving))

			got := receiveSeqs(ctx, t, sub, busy, flood, tc.unsubbed, moving, nil)
			t.Logf("published 0..%d, %v reached a subscriber, delivered %v", seq, reached, fmt.Sprint(got))
			assert.Equal(t, reached, got, "every message that reached a subscriber, in publishing order, once")
			st := sub.Stats()
			assert.Zero(t, st.Lost, "the old node's connection was taken for dead")
			assert.Zero(t, st.Dropped)
		})
	}
}
