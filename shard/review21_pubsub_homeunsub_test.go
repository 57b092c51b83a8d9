package shard_test

import (
	"context"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// The home master of a classic channel and a pattern is killed, and both
// are unsubscribed while they are placed on another master: they must
// end on no node, each unsubscribe confirmed once, and a channel kept
// alongside them must be on exactly one live node.
func TestReview21PubSubUnsubscribeWhileTheHomeMoves(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster and kills a master")
	}
	rc, c, masters := startFailoverCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	sub, err := c.NewSubscription(shard.SubscriptionOptions{})
	require.NoError(t, err)
	defer sub.Close()
	const left, kept, pattern = "r21hu:left", "r21hu:kept", "r21hu:p:*"
	require.NoError(t, sub.Subscribe(ctx, left, kept))
	require.NoError(t, sub.PSubscribe(ctx, pattern))
	for range 3 {
		_, err := sub.Receive(ctx)
		require.NoError(t, err)
	}
	home := homeOf(t, masters, kept)
	replica, err := rc.ReplicaOf(home)
	require.NoError(t, err)

	require.NoError(t, home.Kill())
	waitFor(t, 30*time.Second, "the connection to the home lost", func() bool { return sub.Stats().Lost >= 1 })
	require.NoError(t, sub.Unsubscribe(ctx, left))
	require.NoError(t, sub.PUnsubscribe(ctx, pattern))

	var live []*redistest.Server
	for _, s := range rc.Nodes {
		if s != home {
			live = append(live, s)
		}
	}
	count := func(cmd, name string) int {
		total := 0
		for _, s := range live {
			if cmd == "NUMPAT" {
				out, err := s.Do("PUBSUB", "NUMPAT")
				require.NoError(t, err)
				if out != "0" {
					total++
				}
				continue
			}
			total += numSub(t, s, cmd, name)
		}
		return total
	}
	waitFor(t, 30*time.Second, "the kept channel on one live node", func() bool { return count("NUMSUB", kept) == 1 })
	waitFor(t, 30*time.Second, "the replica promoted", func() bool {
		role, err := replica.Do("ROLE")
		return err == nil && len(role) >= 6 && role[:6] == "master"
	})
	// The cluster broadcasts it; the count is the receiving node's own.
	_, err = c.Do(ctx, "PUBLISH", kept, "probe")
	require.NoError(t, err)
	assert.Zero(t, count("NUMSUB", left), "the unsubscribed channel is still subscribed")
	assert.Zero(t, count("NUMPAT", ""), "the unsubscribed pattern is still subscribed")

	confirmed := map[string]int{}
	for {
		rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
		v, err := sub.Receive(rctx)
		rcancel()
		require.NoError(t, err, "confirmations %v", confirmed)
		if m, ok := v.(redis.Subscription); ok {
			confirmed[m.Kind+" "+m.Channel]++
		}
		if m, ok := v.(redis.Message); ok {
			require.Equal(t, kept, m.Channel)
			break
		}
	}
	assert.Equal(t, map[string]int{"unsubscribe " + left: 1, "punsubscribe " + pattern: 1}, confirmed)
	st := sub.Stats()
	assert.Equal(t, 1, st.Channels)
	assert.Zero(t, st.Patterns)
	assert.Positive(t, st.Resubscribed, "the kept channel moved: %+v", st)
}
