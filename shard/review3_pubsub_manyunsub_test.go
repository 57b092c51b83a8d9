package shard_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An Unsubscribe of more names than one command carries (1,024) is sent
// as several commands on one connection; every name is confirmed once.
func TestReview3PubSubManyNamesUnsubscribedOnce(t *testing.T) {
	_, sub, servers := quietSubscription(t, 1)
	ctx := context.Background()
	defer sub.Close()
	const n = 2500
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("r3many:%d", i)
	}
	require.NoError(t, sub.Subscribe(ctx, names...))
	for range n {
		require.IsType(t, redis.Subscription{}, receiveWithin(t, sub, 5*time.Second))
	}
	require.NoError(t, sub.Unsubscribe(ctx, names...))
	seen := map[string]int{}
	for range n {
		v := receiveWithin(t, sub, 5*time.Second)
		m, ok := v.(redis.Subscription)
		require.True(t, ok, "%#v", v)
		require.Equal(t, "unsubscribe", m.Kind)
		require.Zero(t, m.Count)
		seen[m.Channel]++
	}
	require.Len(t, seen, n)
	for _, name := range names {
		assert.Equal(t, 1, seen[name], name)
	}
	assert.Zero(t, numSub(t, servers[0], "NUMSUB", names[0]))
	assert.Zero(t, numSub(t, servers[0], "NUMSUB", names[n-1]))
	assert.Zero(t, sub.Stats().Channels)
}
