package shard_test

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// heldMove sets up the tests of messages that a new node holds back
// while their channel moves to it: two servers, a client routing every
// year to servers[0] (moving the 2020 channels to servers[1] takes
// StartMigration with to), and a subscription of that client with long
// pings, so that the old node, paused, is not taken for dead while the
// test looks.
type heldMove struct {
	servers []*redistest.Server
	c       *shard.Client
	to      shard.Config
	sub     *shard.Subscription
	resumed atomic.Bool
}

// startHeldMove starts a heldMove; the test closes the subscription.
func startHeldMove(t *testing.T) *heldMove {
	t.Helper()
	h := &heldMove{servers: redistest.StartNTB(t, 2, redistest.Options{})}
	var from shard.Config
	from, h.to = archiveMigration(h.servers)
	h.c = newClient(t, from)
	sub, err := h.c.NewSubscription(shard.SubscriptionOptions{PingInterval: 20 * time.Second, PingTimeout: 20 * time.Second})
	require.NoError(t, err)
	h.sub = sub
	return h
}

// holdOnTheNewNode pauses the old node (resumed when the test ends, if
// the test did not resume it), starts and arms the migration, and
// publishes 1, 2, ... to moving through the client until three of them
// reached a subscriber: the new node's connection, which holds them
// back. It returns the numbers that reached it.
func (h *heldMove) holdOnTheNewNode(ctx context.Context, t *testing.T, moving string) (reached []int) {
	t.Helper()
	require.NoError(t, h.servers[0].Pause())
	t.Cleanup(func() {
		if !h.resumed.Load() {
			_ = h.servers[0].Resume()
		}
	})
	require.NoError(t, h.c.StartMigration(ctx, h.to))
	require.NoError(t, h.c.ArmMigration())
	for seq := 1; len(reached) < 3; seq++ {
		require.NoError(t, ctx.Err(), "the subscriber never appeared on the new node")
		n, err := redis.Int(h.c.Do(ctx, "PUBLISH", moving, strconv.Itoa(seq)))
		require.NoError(t, err)
		if n == 1 {
			reached = append(reached, seq)
		}
	}
	return reached
}

// resume lets the paused old node go on.
func (h *heldMove) resume() error {
	h.resumed.Store(true)
	return h.servers[0].Resume()
}
