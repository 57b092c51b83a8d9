package shard_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/shard"
)

// A manual failover (CLUSTER FAILOVER) makes a replica the master of its
// slots while the old master lives on, as a replica, with a healthy
// connection. The keyspace events of those slots come from the promoted
// replica from then on, and until the subscription is there they are
// lost: a gap, which Stats must show. The old master's connection is not
// lost and the promoted replica had never carried the patterns, so no
// counter moved, and an application watching Lost, Resubscribed and
// Moved for gaps saw none.
func TestReview21PubSubKeyspaceGapOnManualFailoverIsCounted(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster")
	}
	rc, c, masters := startFailoverCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	ks, err := c.SubscribeKeyspace(ctx, shard.KeyspaceOptions{Enable: "KEA", Patterns: []string{"__keyevent@*__:set"}})
	require.NoError(t, err)
	defer ks.Close()
	before := ks.Stats()
	require.Zero(t, before.Lost+before.Resubscribed+before.Moved)

	victim := masters[0]
	replica, err := rc.ReplicaOf(victim)
	require.NoError(t, err)
	_, err = replica.Do("CLUSTER", "FAILOVER")
	require.NoError(t, err)
	waitFor(t, 30*time.Second, "the old master demoted", func() bool {
		role, err := victim.Do("ROLE")
		return err == nil && strings.HasPrefix(role, "slave")
	})
	waitFor(t, 30*time.Second, "the patterns on the promoted replica and off the old master", func() bool {
		on, err := replica.Do("PUBSUB", "NUMPAT")
		off, err2 := victim.Do("PUBSUB", "NUMPAT")
		return err == nil && err2 == nil && on == "1" && off == "0"
	})

	// Its events come through the subscription.
	key := ""
	for i := 0; key == ""; i++ {
		require.Less(t, i, 100000)
		k := fmt.Sprintf("r21ks:%d", i)
		m, err := rc.MasterOfSlot(cluster.Slot(k))
		require.NoError(t, err)
		if m.Addr == replica.Addr {
			key = k
		}
	}
	_, err = c.Do(ctx, "SET", key, "1")
	require.NoError(t, err)
	for {
		rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
		v, err := ks.Receive(rctx)
		rcancel()
		require.NoError(t, err)
		if m, ok := v.(redis.Message); ok {
			if ev, ok := shard.ParseKeyspaceEvent(m); ok && ev.Key == key {
				break
			}
		}
	}
	st := ks.Stats()
	assert.Positive(t, st.Lost+st.Resubscribed+st.Moved,
		"the events of the failed-over slots between the promotion and the subscription there are lost: %+v", st)
}
