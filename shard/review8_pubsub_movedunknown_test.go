package shard_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/stretchr/testify/require"
)

// TestReview8SSubscribeFollowsAMovedWithoutAddress: with
// cluster-preferred-endpoint-type hostname and nodes that announce no
// hostname, a node answers MOVED with "?" for the host (the topology
// gives the nodes' IPs, which the client uses). An SSUBSCRIBE sent to the
// slot's old owner met such a MOVED and the channel left the
// subscription for good, as if an ACL had refused it; commands refresh
// the topology and go on, and so does a subscription now.
func TestReview8SSubscribeFollowsAMovedWithoutAddress(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster")
	}
	rc := startNoHostnameCluster(t)
	cfg := clusterConfig(rc.Seeds()...)
	cfg.Cluster.RefreshInterval = -1
	c := newClient(t, cfg)
	ms := rc.Masters()
	require.Len(t, ms, 3)
	name := nameOnFirstMaster()
	slot := cluster.Slot(name)
	moveSlot(t, slot, ms[0], ms[1], ms)
	_, err := ms[0].Do("SPUBLISH", name, "x")
	require.Error(t, err)
	require.Contains(t, err.Error(), fmt.Sprintf("MOVED %d ?:", slot), "the old owner's redirect names no host")

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sub, err := c.SSubscribe(ctx, name)
	require.NoError(t, err, "the subscription finds the slot's new owner")
	defer sub.Close()
	for {
		n, err := redis.Int(redistestDo(ms[1], "SPUBLISH", name, "hello"))
		require.NoError(t, err)
		if n == 1 {
			break
		}
		require.NoError(t, ctx.Err(), "never subscribed at the new owner %s", ms[1].Addr)
		time.Sleep(5 * time.Millisecond)
	}
	for {
		v, err := sub.Receive(ctx)
		require.NoError(t, err)
		if m, ok := v.(redis.Message); ok {
			require.Equal(t, "hello", string(m.Data))
			break
		}
		if e, ok := v.(error); ok && strings.Contains(e.Error(), "MOVED") {
			t.Fatalf("the subscription reported %v", e)
		}
	}
}

// TestReview8SUnsubscribeAfterSlotMovedAwayWithoutAddress is
// TestPubSubSUnsubscribeAfterSlotMovedAway with nodes whose MOVED names
// no host ("?"): the MOVED that answers the SUNSUBSCRIBE of a slot that
// left the node says, as any MOVED, that the channels went with it,
// whatever address it names.
func TestReview8SUnsubscribeAfterSlotMovedAwayWithoutAddress(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster")
	}
	f := newSunsubFixtureOf(t, redistest.Options{Args: []string{"--cluster-preferred-endpoint-type", "hostname"}})

	f.unsubscribeAfterSlotMovedAway(t)
}
