package shard_test

import (
	"context"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// A shard channel on the old cluster while a client built with
// Config.Migration waits, between nodes that announce no hostname; its
// slot moves there while the application unsubscribes it. The node
// answers the SUNSUBSCRIBE with a MOVED naming no address ("?"), and
// only the old cluster's topology says where the slot went. The read it
// asked for was of the client's own cluster: the old table kept the old
// owner for the slot.
func TestReview12OldClusterSUnsubscribeMovedWithoutAddress(t *testing.T) {
	ctx := oldClusterContext(t, 90*time.Second)
	oldCluster := startNoHostnameCluster(t)
	c, from := waitingOn(t, oldCluster, nil)
	plain := newClient(t, from)

	sch := "r12oldsunsub:{" + strconv.FormatUint(rand.Uint64(), 36) + "}"
	owner, dst := routedOwner(t, oldCluster, plain, sch)
	sub := subscribedOnOld(ctx, t, c, sch, owner)
	require.Equal(t, owner.Addr, shard.Review12OldClusterRoute(c, sch))

	// The subscription reads nothing until the unsubscribe is sent: the
	// node's own sunsubscribe push for the moved slot comes first, then
	// its MOVED to the SUNSUBSCRIBE.
	h := shard.HoldSubscription(sub)
	_, err := redistest.MoveSlot(ctx, cluster.Slot(sch), owner, dst, oldCluster.Masters(), redistest.SlotMoveOptions{})
	if err != nil {
		h.Release()
		require.NoError(t, err)
	}
	_, perr := owner.Do("SPUBLISH", sch, "x")
	err = h.SUnsubscribe(sch)
	h.Release()
	require.NoError(t, err)
	require.Error(t, perr)
	require.Contains(t, perr.Error(), "?:", "the old owner's redirect names no host")

	rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
	defer rcancel()
	for {
		v, err := sub.Receive(rctx)
		require.NoError(t, err, "the unsubscribe is confirmed")
		if s, ok := v.(redis.Subscription); ok && s.Kind == "sunsubscribe" {
			require.Equal(t, sch, s.Channel)
			break
		}
	}
	waitFor(t, 10*time.Second, "the old cluster's table naming the slot's new owner", func() bool {
		return shard.Review12OldClusterRoute(c, sch) == dst.Addr
	})
}
