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

// TestReview19PubSubSubscribesAndUnsubscribesShareRoom: a large
// Unsubscribe and a large Subscribe under way together on one connection
// share the bound on the confirmations it awaits. With an allowance
// each, they awaited twice the bound between them: at the default 4 MB,
// 8 MB, exactly the server's default soft limit for pub/sub clients,
// over which it closes the connection. Here the bound is lowered to
// 256 KB and the node's limit to 512 KB (hard), the same proportion.
// Neither kind starves the other: with the node frozen, each has some
// confirmations awaited; once it answers, both calls complete, the
// connection is kept, and only the new names are left.
func TestReview19PubSubSubscribesAndUnsubscribesShareRoom(t *testing.T) {
	const n, limit = 40_000, 256 << 10
	servers := redistest.StartNTB(t, 1, redistest.Options{})
	cfg := ringConfig(servers)
	// The node stays frozen for a while with confirmations awaited: an
	// Unsubscribe gives up on a node that reads nothing for WriteTimeout.
	cfg.Pool.WriteTimeout = time.Minute
	c := newClient(t, cfg)
	srv := servers[0]
	_, err := srv.Do("CONFIG", "SET", "client-output-buffer-limit", "pubsub 512kb 512kb 0")
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// Health PINGs rare: the frozen node's connection is kept.
	sub, err := c.NewSubscription(shard.SubscriptionOptions{PingInterval: time.Minute, BufferSize: 1 << 20})
	require.NoError(t, err)
	defer sub.Close()
	shard.SetAwaitedRepliesLimit(sub, limit)
	old := make([]string, n)
	fresh := make([]string, n)
	for i := range old {
		old[i] = fmt.Sprintf("r19share:old:%08d", i)
		fresh[i] = fmt.Sprintf("r19share:new:%08d", i)
	}
	require.NoError(t, sub.Subscribe(ctx, old...))

	// The most confirmations the connection awaited, sampled all along.
	most := sampleMost(t, func() int { return shard.AwaitedConfirmations(sub) })

	pauseUntilCleanup(t, srv)
	unsub := make(chan error, 1)
	go func() { unsub <- sub.Unsubscribe(ctx, old...) }()
	waitFor(t, time.Minute, "unsubscribes filling the room", func() bool {
		return shard.AwaitedUnsubscribes(sub) >= limit*3/4
	})
	subc := make(chan error, 1)
	go func() { subc <- sub.Subscribe(ctx, fresh...) }()
	// The Subscribe is not held back by the Unsubscribe's confirmations.
	waitFor(t, time.Minute, "subscribes sent beside the unsubscribes", func() bool {
		return shard.AwaitedSubscribes(sub) > 0
	})
	t.Logf("frozen: %d bytes of subscribe and %d of unsubscribe confirmations awaited",
		shard.AwaitedSubscribes(sub), shard.AwaitedUnsubscribes(sub))
	assert.LessOrEqual(t, shard.AwaitedConfirmations(sub), limit*3/2, "confirmations awaited beyond the bound")

	require.NoError(t, srv.Resume())
	require.NoError(t, <-unsub)
	require.NoError(t, <-subc)
	waitFor(t, time.Minute, "only the new names on the node", func() bool { return pubsubChannels(t, srv) == n })
	t.Logf("%+v, most awaited %d", sub.Stats(), most.Load())
	assert.Zero(t, sub.Stats().Lost, "the node closed the connection")
	assert.LessOrEqual(t, most.Load(), int64(limit*3/2), "confirmations awaited beyond the bound")
}
