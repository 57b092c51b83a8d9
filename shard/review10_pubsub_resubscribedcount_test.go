package shard_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// Stats().Resubscribed counts the names subscribed again: after a lost
// connection, or moved to another node. A ring pattern, which every shard
// carries, was counted as well when a shard joined the ring (a migration
// to a ring with one more shard, which places patterns on the new shard
// from StartMigration on, before any message is routed there): nothing
// was subscribed again there, nothing was lost, and an application
// watching the counter for possible gaps saw one per pattern and shard.
func TestReview10PubSubResubscribedCountsNoPatternOnANewShard(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	from, to := ringConfig(servers[:2]), ringConfig(servers)
	c := newClient(t, from)
	oldRing, err := shard.NewRingRouter(from.RingConfig())
	require.NoError(t, err)
	newRing, err := shard.NewRingRouter(to.RingConfig())
	require.NoError(t, err)
	// A channel that the new ring places on the new shard, and one that
	// stays on the second shard.
	var moving, staying string
	for i := 0; moving == "" || staying == ""; i++ {
		require.Less(t, i, 10000)
		n := fmt.Sprintf("r10resub:%d", i)
		was, err := oldRing.Route(n)
		require.NoError(t, err)
		is, err := newRing.Route(n)
		require.NoError(t, err)
		switch {
		case is.Addr == servers[2].Addr && moving == "":
			moving = n
		case is.Addr == servers[1].Addr && was.Addr == servers[1].Addr && staying == "":
			staying = n
		}
	}

	sub, err := c.NewSubscription(shard.SubscriptionOptions{})
	require.NoError(t, err)
	defer sub.Close()
	require.NoError(t, sub.PSubscribe(ctx, "r10resub:*"))
	require.NoError(t, sub.Subscribe(ctx, moving, staying))
	require.Zero(t, sub.Stats().Resubscribed)

	require.NoError(t, c.StartMigration(ctx, to))
	require.NoError(t, c.ArmMigration())
	waitFor(t, 10*time.Second, "the pattern and the moved channel subscribed on the new shard", func() bool {
		np, err := servers[2].Do("PUBSUB", "NUMPAT")
		if err != nil || np != "1" {
			return false
		}
		ns, err := servers[2].Do("PUBSUB", "NUMSUB", moving)
		return err == nil && ns == moving+"\n1"
	})
	// Confirmed: Subscribe of a name carried everywhere returns at once.
	require.NoError(t, sub.PSubscribe(ctx, "r10resub:*"))
	require.NoError(t, sub.Subscribe(ctx, moving))
	st := sub.Stats()
	assert.EqualValues(t, 1, st.Resubscribed, "the channel that moved, not the pattern on the new shard")
	assert.Zero(t, st.Lost)

	// The first shard restarted: the pattern it carried (and no channel)
	// is subscribed on it again, and counted.
	require.NoError(t, servers[0].Kill())
	waitFor(t, 10*time.Second, "the connection to the killed shard lost", func() bool { return sub.Stats().Lost >= 1 })
	require.NoError(t, servers[0].Restart())
	waitFor(t, 10*time.Second, "the pattern subscribed again on the restarted shard", func() bool {
		np, err := servers[0].Do("PUBSUB", "NUMPAT")
		return err == nil && np == "1"
	})
	require.NoError(t, sub.PSubscribe(ctx, "r10resub:*"))
	assert.EqualValues(t, 2, sub.Stats().Resubscribed, "the pattern on the restarted shard")
}
