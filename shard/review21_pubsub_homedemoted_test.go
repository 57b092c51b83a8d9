package shard_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/shard"
)

// A manual failover (CLUSTER FAILOVER) demotes the home master of a
// classic channel and a pattern to a replica, which lives on and still
// receives every PUBLISH the cluster broadcasts. Moving the names to
// another master opened a gap for nothing: unsubscribed at the old home
// first (a name on two nodes would come twice), they were subscribed
// nowhere until the new home confirmed, and what was published in
// between was lost (Stats().Resubscribed counted it). They must stay,
// and every message published after the failover arrive once.
func TestReview21PubSubHomeDemotedByManualFailoverStays(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster")
	}
	rc, c, masters := startFailoverCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	sub, err := c.NewSubscription(shard.SubscriptionOptions{})
	require.NoError(t, err)
	defer sub.Close()
	const channel, pattern, matching = "r21hd:news", "r21hd:p:*", "r21hd:p:x"
	require.NoError(t, sub.Subscribe(ctx, channel))
	require.NoError(t, sub.PSubscribe(ctx, pattern))
	home := homeOf(t, masters, channel)
	replica, err := rc.ReplicaOf(home)
	require.NoError(t, err)

	_, err = replica.Do("CLUSTER", "FAILOVER")
	require.NoError(t, err)
	waitFor(t, 30*time.Second, "the home demoted", func() bool {
		role, err := home.Do("ROLE")
		return err == nil && strings.HasPrefix(role, "slave")
	})
	waitFor(t, 30*time.Second, "the client to see the promoted replica", func() bool {
		for _, m := range c.Router().(*shard.ClusterRouter).Table().Masters() {
			if m.Addr == replica.Addr {
				return true
			}
		}
		_ = c.Refresh(ctx)
		return false
	})
	// A few passes of the subscription's placement.
	require.NoError(t, sub.Subscribe(ctx, "r21hd:other"))
	require.NoError(t, sub.Unsubscribe(ctx, "r21hd:other"))

	const count = 20
	for i := 1; i <= count; i++ {
		_, err := c.Do(ctx, "PUBLISH", channel, strconv.Itoa(i))
		require.NoError(t, err)
		_, err = c.Do(ctx, "PUBLISH", matching, strconv.Itoa(i))
		require.NoError(t, err)
	}
	got := map[string][]string{}
	for n := 0; n < 2*count; {
		rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
		v, err := sub.Receive(rctx)
		rcancel()
		require.NoError(t, err, "got %v", got)
		if m, ok := v.(redis.Message); ok {
			got[m.Channel] = append(got[m.Channel], string(m.Data))
			n++
		}
	}
	var want []string
	for i := 1; i <= count; i++ {
		want = append(want, strconv.Itoa(i))
	}
	assert.Equal(t, want, got[channel])
	assert.Equal(t, want, got[matching])
	assert.Equal(t, 1, numSub(t, home, "NUMSUB", channel), "the channel left the demoted home")
	st := sub.Stats()
	assert.Zero(t, st.Resubscribed, "a gap for nothing: %+v", st)
	assert.Zero(t, st.Lost)
}
