package shard_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/shard"
)

// Many names subscribed on one node at once: the server builds all their
// confirmations as it reads the commands, faster than the subscription
// reads them, and closes a subscriber whose output buffer passes
// client-output-buffer-limit pubsub. The subscription used to send every
// name at once: the node closed the connection, the subscription dialled
// again and sent them all again, for good, and Subscribe never returned
// (with the default limits, from about 600,000 names on one node; here
// with a tighter limit, and the subscription's bound on the
// confirmations it awaits lowered in proportion).
func TestReview17PubSubManyNamesUnderOutputLimit(t *testing.T) {
	c, servers := startRing(t, 1)
	_, err := servers[0].Do("CONFIG", "SET", "client-output-buffer-limit", "pubsub 512kb 512kb 0")
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	sub, err := c.NewSubscription(shard.SubscriptionOptions{})
	require.NoError(t, err)
	defer sub.Close()
	shard.SetAwaitedRepliesLimit(sub, 256<<10)
	names := make([]string, 100000)
	for i := range names {
		names[i] = fmt.Sprintf("r17big:channel:%07d", i)
	}
	start := time.Now()
	err = sub.Subscribe(ctx, names...)
	t.Logf("%d names subscribed in %v: %+v", len(names), time.Since(start), sub.Stats())
	require.NoError(t, err)
	assert.Zero(t, sub.Stats().Lost, "the node closed the connection")
	assert.Equal(t, 1, numSub(t, servers[0], "NUMSUB", names[len(names)-1]))
}
