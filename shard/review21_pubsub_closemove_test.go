package shard_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// Subscriptions closed while their names move (a slot moved, whose
// old owner dropped the shard channels; a master killed, whose names are
// being placed again) leave no goroutine and no connection on any node.
func TestReview21PubSubCloseDuringAMoveLeavesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster")
	}
	rc := redistest.StartClusterTB(t, 3, 1, redistest.Options{NodeTimeout: time.Second,
		Args: []string{"--cluster-require-full-coverage", "no"}})
	masters := rc.Masters()
	require.Len(t, masters, 3)
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	cfg := clusterConfig(rc.Seeds()...)
	cfg.Pool.ClientName = "r21closemove"
	c, err := shard.New(context.Background(), cfg)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()

	names := make([]string, 300)
	for i := range names {
		names[i] = fmt.Sprintf("r21cm:%d", i)
	}
	open := func() *shard.Subscription {
		sub, err := c.NewSubscription(shard.SubscriptionOptions{})
		require.NoError(t, err)
		require.NoError(t, sub.SSubscribe(ctx, names...))
		require.NoError(t, sub.Subscribe(ctx, "r21cm:classic"))
		require.NoError(t, sub.PSubscribe(ctx, "r21cm:*"))
		return sub
	}

	// Slots moved one after the other, each subscription closed as its
	// old owner drops the channels.
	for i := range 5 {
		sub := open()
		slot := cluster.Slot(names[i])
		from, err := rc.MasterOfSlot(slot)
		require.NoError(t, err)
		to := masters[0]
		if to == from {
			to = masters[1]
		}
		moveSlot(t, slot, from, to, masters)
		require.NoError(t, sub.Close())
	}

	// A master killed: closed while its names are placed again.
	sub := open()
	require.NoError(t, masters[2].Kill())
	waitFor(t, 30*time.Second, "the connection lost", func() bool { return sub.Stats().Lost >= 1 })
	require.NoError(t, sub.Close())

	require.NoError(t, c.Close())
	for _, s := range rc.Nodes {
		if s == masters[2] {
			continue
		}
		waitFor(t, 30*time.Second, "no connection of the client left on "+s.Addr, func() bool {
			out, err := s.Do("CLIENT", "LIST")
			return err == nil && !strings.Contains(out, "name=r21closemove")
		})
	}
}
