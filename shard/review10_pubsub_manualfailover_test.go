package shard_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// A manual failover (CLUSTER FAILOVER on a replica) leaves the old master
// running, as a replica. Its shard channels must follow their slots to
// the promoted replica, and a classic channel homed there must be carried
// by exactly one node afterwards: the old master still receives the
// cluster's PUBLISH broadcasts as a replica, so a name subscribed on it
// and on a new home would come twice. Every message published after the
// failover settled arrives once, in order.
func TestReview10PubSubClusterManualFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster")
	}
	rc, c, masters := startFailoverCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	sub, err := c.NewSubscription(shard.SubscriptionOptions{})
	require.NoError(t, err)
	defer sub.Close()
	const classic = "r10mf:news"
	require.NoError(t, sub.Subscribe(ctx, classic))
	victim := homeOf(t, masters, classic)
	var sharded string
	for i := 0; sharded == ""; i++ {
		require.Less(t, i, 100000)
		n := fmt.Sprintf("r10mf:s:%d", i)
		m, err := rc.MasterOfSlot(cluster.Slot(n))
		require.NoError(t, err)
		if m == victim {
			sharded = n
		}
	}
	require.NoError(t, sub.SSubscribe(ctx, sharded))
	replica, err := rc.ReplicaOf(victim)
	require.NoError(t, err)

	_, err = replica.Do("CLUSTER", "FAILOVER")
	require.NoError(t, err)
	waitFor(t, 30*time.Second, "the old master demoted", func() bool {
		role, err := victim.Do("ROLE")
		return err == nil && strings.HasPrefix(role, "slave")
	})
	nodes := append(append([]*redistest.Server{}, masters...), replica)
	waitFor(t, 30*time.Second, "each name carried by one node, the shard channel by the promoted replica", func() bool {
		total := 0
		for _, n := range nodes {
			total += numSub(t, n, "NUMSUB", classic)
		}
		return total == 1 && numSub(t, replica, "SHARDNUMSUB", sharded) == 1 && numSub(t, victim, "SHARDNUMSUB", sharded) == 0
	})
	waitFor(t, 30*time.Second, "the client routing SPUBLISH to the promoted replica", func() bool {
		n, err := redis.Int(c.Do(ctx, "SPUBLISH", sharded, "probe"))
		return err == nil && n == 1
	})

	const count = 20
	for i := 1; i <= count; i++ {
		_, err := c.Do(ctx, "PUBLISH", classic, strconv.Itoa(i))
		require.NoError(t, err)
		n, err := redis.Int(c.Do(ctx, "SPUBLISH", sharded, strconv.Itoa(i)))
		require.NoError(t, err)
		require.Equal(t, 1, n)
	}
	_, err = c.Do(ctx, "PUBLISH", classic, "end")
	require.NoError(t, err)
	_, err = c.Do(ctx, "SPUBLISH", sharded, "end")
	require.NoError(t, err)
	got := map[string][]string{}
	for ended := 0; ended < 2; {
		rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
		v, err := sub.Receive(rctx)
		rcancel()
		require.NoError(t, err, "got %v", got)
		m, ok := v.(redis.Message)
		if !ok || string(m.Data) == "probe" {
			continue
		}
		if string(m.Data) == "end" {
			ended++
			continue
		}
		got[m.Channel] = append(got[m.Channel], string(m.Data))
	}
	var want []string
	for i := 1; i <= count; i++ {
		want = append(want, strconv.Itoa(i))
	}
	assert.Equal(t, want, got[classic])
	assert.Equal(t, want, got[sharded])
}
