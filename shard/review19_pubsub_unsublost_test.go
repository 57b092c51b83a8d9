package shard_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/shard"
)

// TestReview19PubSubUnsubscribeLostWhileWaiting: an Unsubscribe of many
// names that waits for room among the confirmations awaited (the node
// frozen) when its node dies returns a *NodeError naming the node and
// wrapping the cause, as the docs promise for a connection found broken,
// not nil. Once the node is back, the names that were to stay (and
// only those) are subscribed on the new connection and deliver, and the
// subscription leaves no goroutine behind.
func TestReview19PubSubUnsubscribeLostWhileWaiting(t *testing.T) {
	const n = 20_000
	c, servers := startRing(t, 1)
	srv := servers[0]
	base := runtime.NumGoroutine()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// Health PINGs rare: the frozen node's connection is lost to its
	// death, not to a PING that went unanswered.
	sub, names := bigSubscription(ctx, t, c, "r19lost:%06d", n)

	pauseUntilCleanup(t, srv)
	errc := make(chan error, 1)
	go func() { errc <- sub.Unsubscribe(ctx, names[:n/2]...) }()
	// A first piece written, the call waits for its confirmations
	// before the next: the frozen node sends none.
	waitFor(t, time.Minute, "a first piece of unsubscribes written", func() bool {
		return shard.AwaitedUnsubscribes(sub) > 0
	})
	select {
	case err := <-errc:
		t.Fatalf("Unsubscribe returned before the node was lost: %v", err)
	default:
	}
	require.NoError(t, srv.Kill())

	var uerr error
	select {
	case uerr = <-errc:
	case <-time.After(time.Minute):
		t.Fatal("Unsubscribe did not return after its node died")
	}
	t.Logf("Unsubscribe: %v", uerr)
	require.Error(t, uerr, "a connection lost under Unsubscribe")
	var ne *shard.NodeError
	require.True(t, errors.As(uerr, &ne), "not a *NodeError: %#v", uerr)
	assert.Equal(t, srv.Addr, ne.Node.Addr)
	assert.NotNil(t, errors.Unwrap(ne), "the *NodeError wraps no cause")
	assert.False(t, errors.Is(uerr, context.Canceled) || errors.Is(uerr, context.DeadlineExceeded), "%v", uerr)
	assert.False(t, errors.Is(uerr, shard.ErrSubscriptionClosed), "%v", uerr)

	// Back: "keep" and the second half are subscribed again, the first
	// half is not.
	require.NoError(t, srv.Restart())
	waitFor(t, 2*time.Minute, "keep and the names kept subscribed again", func() bool {
		return pubsubChannels(t, srv) == 1+n/2
	})
	for _, ch := range []string{names[0], names[n/2-1]} {
		got, err := redis.Int(c.Do(ctx, "PUBLISH", ch, "gone"))
		require.NoError(t, err)
		assert.Zero(t, got, "%s, unsubscribed, is subscribed again", ch)
	}
	want := map[string]bool{"keep": true, names[n/2]: true, names[n-1]: true}
	for ch := range want {
		got, err := redis.Int(c.Do(ctx, "PUBLISH", ch, "back"))
		require.NoError(t, err)
		assert.Equal(t, 1, got, "%s has no subscriber", ch)
	}
	rctx, rcancel := context.WithTimeout(ctx, time.Minute)
	defer rcancel()
	for len(want) > 0 {
		v, err := sub.Receive(rctx)
		require.NoError(t, err, "still missing %v", want)
		if m, ok := v.(redis.Message); ok {
			assert.Equal(t, "back", string(m.Data), "a message of %s", m.Channel)
			delete(want, m.Channel)
		}
	}

	require.NoError(t, sub.Close())
	requireGoroutinesBackTo(t, base)
}

// bigSubscription returns a subscription of c, closed when the test
// ends, with health PINGs once a minute and room for 16 KiB of awaited
// confirmations, subscribed to "keep" and to n names made with format
// (one %d verb), which it returns.
func bigSubscription(ctx context.Context, t *testing.T, c *shard.Client, format string, n int) (*shard.Subscription, []string) {
	t.Helper()
	sub, err := c.NewSubscription(shard.SubscriptionOptions{PingInterval: time.Minute})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sub.Close() })
	shard.SetAwaitedRepliesLimit(sub, 16<<10)
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf(format, i)
	}
	require.NoError(t, sub.Subscribe(ctx, "keep"))
	require.NoError(t, sub.Subscribe(ctx, names...))
	return sub, names
}

// requireGoroutinesBackTo waits (30 s at most) until the process runs no
// more goroutines than base, and fails the test with their stacks
// otherwise.
func requireGoroutinesBackTo(t *testing.T, base int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for runtime.NumGoroutine() > base && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > base {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines left behind the subscription:\n%s", n-base, buf[:runtime.Stack(buf, true)])
	}
}
