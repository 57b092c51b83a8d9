package shard_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// Close while a connection of the subscription is being dialled again:
// the node's server is paused, so the new connection's setup (CLIENT
// SETNAME) waits for an answer that does not come, for as long as the
// dial timeout. Close must not wait for it, and must leave no goroutine
// and no connection behind once the server answers again.
func TestReview10PubSubCloseWhileRedialling(t *testing.T) {
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	cfg := ringConfig(servers)
	cfg.Pool.ClientName = "r10redial"
	cfg.Pool.DialTimeout = 30 * time.Second
	c, err := shard.New(context.Background(), cfg)
	require.NoError(t, err)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rr, err := shard.NewRingRouter(cfg.RingConfig())
	require.NoError(t, err)
	var names []string
	for i := 0; len(names) < 2; i++ {
		require.Less(t, i, 10000)
		n := fmt.Sprintf("r10redial:%d", i)
		node, err := rr.Route(n)
		require.NoError(t, err)
		if node.Addr == servers[len(names)].Addr {
			names = append(names, n)
		}
	}
	sub, err := c.NewSubscription(shard.SubscriptionOptions{PingInterval: 100 * time.Millisecond, PingTimeout: 300 * time.Millisecond})
	require.NoError(t, err)
	require.NoError(t, sub.Subscribe(ctx, names...))
	require.NoError(t, sub.PSubscribe(ctx, "r10redial:*"))
	_ = sub.Channel()
	require.Equal(t, 2, subscribersNamed(t, servers, "r10redial"))

	pauseUntilCleanup(t, servers[1])
	before := sub.Stats().Dials
	waitFor(t, 20*time.Second, "the paused shard's connection lost and dialled again", func() bool {
		st := sub.Stats()
		return st.Lost >= 1 && st.Dials > before
	})
	start := time.Now()
	require.NoError(t, sub.Close())
	took := time.Since(start)
	assert.Less(t, took, 10*time.Second, "Close waited for the dial in flight")
	t.Logf("Close took %v", took)

	require.NoError(t, servers[1].Resume())
	waitFor(t, 10*time.Second, "no subscription connection left on either server", func() bool {
		return subscribersNamed(t, servers, "r10redial") == 0
	})
	// With the client closed too, no connection of either is left: the
	// dial in flight did not leave one open.
	require.NoError(t, c.Close())
	waitFor(t, 10*time.Second, "no connection left on either server", func() bool {
		n := 0
		for _, srv := range servers {
			list, err := srv.Do("CLIENT", "LIST")
			require.NoError(t, err)
			n += strings.Count(list, " name=r10redial ")
		}
		return n == 0
	})
}
