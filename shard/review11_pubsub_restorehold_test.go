package shard_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A channel moves to another shard while its own is ejected (paused,
// auto-eject), and back once the shard is restored. The temporary shard's
// connection holds the channel's messages back until the paused one lets
// the channel go; when the restored shard's new SUBSCRIBE was sent before
// its confirmation of the old UNSUBSCRIBE was read, that confirmation did
// not count (the shard had the channel again), and the messages published
// during the ejection came only after the whole hold limit (PingInterval +
// PingTimeout, 10 s here), after the ones published once it was back.
func TestReview11PubSubRestoredShardReleasesTheTemporaryHold(t *testing.T) {
	const pingInterval, pingTimeout = 5 * time.Second, 5 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	cfg := ringConfig(servers)
	cfg.Health.AutoEject = true
	cfg.Health.FailureLimit = 2
	cfg.Health.Timeout = 300 * time.Millisecond
	c := newClient(t, cfg)
	rr, ok := c.Router().(*shard.RingRouter)
	require.True(t, ok, "%T", c.Router())
	paused, temp := servers[0], servers[1]
	moving := routedTo(t, rr, "r11restore:", paused.Addr)

	sub, err := c.NewSubscription(shard.SubscriptionOptions{PingInterval: pingInterval, PingTimeout: pingTimeout})
	require.NoError(t, err)
	defer sub.Close()
	require.NoError(t, sub.Subscribe(ctx, moving))
	v, err := sub.Receive(ctx)
	require.NoError(t, err)
	require.Equal(t, redis.Subscription{Kind: "subscribe", Channel: moving, Count: 1}, v)

	require.NoError(t, paused.Pause())
	t.Cleanup(func() { _ = paused.Resume() })
	waitFor(t, 20*time.Second, "the paused shard ejected and the channel subscribed on the other", func() bool {
		return rr.Ejected(0) && numSub(t, temp, "NUMSUB", moving) == 1
	})
	require.Equal(t, "1", publishOn(t, temp, moving, "1"), "message 1 reaches the subscriber on the temporary shard")

	// The shard comes back; the subscription places the channel there
	// again before it reads the shard's confirmation of the old
	// UNSUBSCRIBE, which the shard sends as soon as it runs again.
	h := shard.HoldSubscription(sub)
	require.NoError(t, paused.Resume())
	deadline := time.Now().Add(20 * time.Second)
	for rr.Ejected(0) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	restored := !rr.Ejected(0)
	if restored {
		h.Review11Reconcile()
	}
	h.Release()
	require.True(t, restored, "the resumed shard restored")
	waitFor(t, 20*time.Second, "the channel back on its shard and gone from the other", func() bool {
		return numSub(t, paused, "NUMSUB", moving) == 1 && numSub(t, temp, "NUMSUB", moving) == 0
	})
	require.Equal(t, "1", publishOn(t, paused, moving, "2"), "message 2 reaches the subscriber on the restored shard")
	published := time.Now()

	var got []int
	rctx, rcancel := context.WithTimeout(ctx, 3*pingInterval)
	defer rcancel()
	for len(got) < 2 {
		v, err := sub.Receive(rctx)
		require.NoError(t, err, "got %v of [1 2]", got)
		if m, ok := v.(redis.Message); ok {
			i, err := strconv.Atoi(string(m.Data))
			require.NoError(t, err)
			got = append(got, i)
		}
	}
	late := time.Since(published)
	t.Logf("got %v, the last %v after message 2 was published", got, late)
	assert.Equal(t, []int{1, 2}, got, "in publishing order")
	assert.Less(t, late, 2*time.Second, "held back far longer than the move took (hold limit %v)", pingInterval+pingTimeout)
	assert.Zero(t, sub.Stats().Lost, "no connection taken for dead")
	assert.Zero(t, sub.Stats().Dropped)
}

// publishOn publishes data to channel on server s itself and returns its
// reply: how many subscribers it reached.
func publishOn(t *testing.T, s *redistest.Server, channel, data string) string {
	t.Helper()
	out, err := s.Do("PUBLISH", channel, data)
	require.NoError(t, err)
	return out
}
