package shard_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// longWriteSubscription starts a one-server ring whose pool's WriteTimeout
// is writeTimeout and opens a subscription on it whose reader deadline
// (PingInterval+PingTimeout) is as long, as a subscription with rare
// health checks has it: a write to a node that does not read then stalls
// until Close or a caller's ctx ends it, not after a deadline of the
// test's. The caller closes the subscription and stalls the server with
// pauseUntilCleanup once it has subscribed what it needs.
func longWriteSubscription(t *testing.T, writeTimeout time.Duration) (*shard.Subscription, *redistest.Server) {
	t.Helper()
	c0, servers := startRing(t, 1)
	c0.Close()
	cfg := ringConfig(servers)
	cfg.Pool.WriteTimeout = writeTimeout
	c := newClient(t, cfg)
	sub, err := c.NewSubscription(shard.SubscriptionOptions{PingInterval: writeTimeout, PingTimeout: writeTimeout})
	require.NoError(t, err)
	return sub, servers[0]
}

// stallWrite makes sub, a longWriteSubscription, subscribe prefix+":a"
// on server, stops server until the test's cleanup and takes the
// subscription's lock as its placement loop does before a write. It
// returns the hold, to write with and release, and bufferFillingChannels
// of prefix: a SUBSCRIBE of them through the hold stalls in the write.
func stallWrite(t *testing.T, sub *shard.Subscription, server *redistest.Server, prefix string) (*shard.HeldSubscription, []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	require.NoError(t, sub.Subscribe(ctx, prefix+":a"))
	require.Equal(t, 1, sub.Stats().Connections)
	pauseUntilCleanup(t, server)
	big := bufferFillingChannels(prefix)
	return shard.HoldSubscription(sub), big
}

// bufferFillingChannels returns 32 channel names of a MiB each, starting
// with prefix: far more than the socket buffers of both ends hold, so a
// SUBSCRIBE of them to a stopped server blocks in the write.
func bufferFillingChannels(prefix string) []string {
	big := make([]string, 32)
	for i := range big {
		big[i] = fmt.Sprintf("%s:%d:%s", prefix, i, strings.Repeat("x", 1<<20))
	}
	return big
}

// quietSubscription starts a ring of n servers and opens a subscription
// on it whose health pings are a minute apart: during a test only the
// test's own calls reach the nodes. The caller closes it.
func quietSubscription(t *testing.T, n int) (*shard.Client, *shard.Subscription, []*redistest.Server) {
	t.Helper()
	c, servers := startRing(t, n)
	sub, err := c.NewSubscription(shard.SubscriptionOptions{PingInterval: time.Minute, PingTimeout: time.Minute})
	require.NoError(t, err)
	return c, sub, servers
}
