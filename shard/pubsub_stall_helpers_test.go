package shard_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
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

// floodBeforeMove publishes through one pipelined connection to addr,
// with publish (PUBLISH or SPUBLISH), flood messages of 512 bytes to busy
// and then "0" to moving, and requires message 0 to reach a subscriber:
// the node has far more to deliver to it than the socket buffers hold,
// message 0 last, when a move of moving starts.
func floodBeforeMove(t *testing.T, addr, publish, busy, moving string, flood int) {
	t.Helper()
	conn, err := redis.Dial("tcp", addr)
	require.NoError(t, err)
	defer conn.Close()
	payload := strings.Repeat("b", 512)
	for i := 0; i < flood; i++ {
		require.NoError(t, conn.Send(publish, busy, payload))
	}
	require.NoError(t, conn.Send(publish, moving, "0"))
	require.NoError(t, conn.Flush())
	for i := 0; i < flood; i++ {
		_, err := conn.Receive()
		require.NoError(t, err)
	}
	n, err := redis.Int(conn.Receive())
	require.NoError(t, err)
	require.Equal(t, 1, n, "message 0 published while subscribed on the old node")
}

// publishUntilReached publishes 1, 2, ... to moving through c, with
// publish, each once the one before returned, until five of them reached
// a subscriber (where c routes moving now); it fails when ctx ends first,
// saying what did not appear there. It returns the messages that reached
// one, 0 (floodBeforeMove's) first, and the last one published.
func publishUntilReached(ctx context.Context, t *testing.T, c *shard.Client, publish, moving, what string) (reached []int, seq int) {
	t.Helper()
	reached = []int{0}
	for len(reached) < 6 {
		require.NoError(t, ctx.Err(), "%s never appeared on the new node", what)
		seq++
		n, err := redis.Int(c.Do(ctx, publish, moving, strconv.Itoa(seq)))
		require.NoError(t, err)
		if n == 1 {
			reached = append(reached, seq)
		}
	}
	return reached, seq
}

// receiveSeqs receives from sub until it has had flood messages of busy
// and the confirmation kind ("unsubscribe", "punsubscribe", ...) of name,
// and returns the numbers the other messages carry, in the order they
// came. check, when not nil, is called on each of those messages.
func receiveSeqs(ctx context.Context, t *testing.T, sub *shard.Subscription, busy string, flood int, kind, name string, check func(redis.Message)) []int {
	t.Helper()
	var got []int
	busySeen := 0
	for left := false; busySeen < flood || !left; {
		v, err := sub.Receive(ctx)
		require.NoError(t, err, "received %d of %d busy messages, and %v", busySeen, flood, got)
		if m, ok := v.(redis.Subscription); ok && m.Kind == kind && m.Channel == name {
			left = true
		}
		m, ok := v.(redis.Message)
		if !ok {
			continue
		}
		if m.Channel == busy {
			busySeen++
			continue
		}
		if check != nil {
			check(m)
		}
		i, err := strconv.Atoi(string(m.Data))
		require.NoError(t, err)
		got = append(got, i)
	}
	return got
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
