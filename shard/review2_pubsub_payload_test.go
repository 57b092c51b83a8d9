package shard_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Channels with hash tags, binary names and binary, empty and 1 MB
// payloads: PUBLISH through the client meets the subscription on the
// shard the channel hashes to, and message and pmessage deliver the
// payload byte for byte.
func TestReview2PubSubRingPayloadsAndHashTags(t *testing.T) {
	c, _ := startRing(t, 3)
	ctx := context.Background()
	sub, err := c.NewSubscription(shard.SubscriptionOptions{})
	require.NoError(t, err)
	defer sub.Close()
	var names []string
	for i := range 40 {
		names = append(names, fmt.Sprintf("{r2tag:%d}:a", i), fmt.Sprintf("x{r2tag:%d}:b", i))
	}
	names = append(names, "r2bin:\x00\xff\r\n", "")
	require.NoError(t, sub.Subscribe(ctx, names...))
	require.NoError(t, sub.PSubscribe(ctx, "r2pat:*"))

	big := bytes.Repeat([]byte{0, 1, 2, 0xff, '\r', '\n'}, (1<<20)/6+1)[:1<<20]
	payloads := [][]byte{{}, {0, 0xff, '\r', '\n', '$'}, big}
	for _, name := range names {
		for _, p := range payloads[:2] {
			n, err := redis.Int(c.Do(ctx, "PUBLISH", name, p))
			require.NoError(t, err)
			require.Equal(t, 1, n, "PUBLISH %q reached %d subscribers", name, n)
		}
	}
	for _, p := range payloads {
		n, err := redis.Int(c.Do(ctx, "PUBLISH", "r2pat:\x00x", p))
		require.NoError(t, err)
		require.Equal(t, 1, n)
	}
	n, err := redis.Int(c.Do(ctx, "PUBLISH", names[0], big))
	require.NoError(t, err)
	require.Equal(t, 1, n)

	want := 2*len(names) + len(payloads) + 1
	msgs, err := collect(ctx, sub, want, 20*time.Second)
	require.NoError(t, err)
	require.Len(t, msgs, want)
	got := map[string][][]byte{}
	for _, m := range msgs {
		key := m.Pattern + "|" + m.Channel
		got[key] = append(got[key], m.Data)
	}
	for _, name := range names[1:] {
		require.Len(t, got["|"+name], 2, name)
		assert.Equal(t, []byte{}, got["|"+name][0], name)
		assert.Equal(t, payloads[1], got["|"+name][1], name)
	}
	require.Len(t, got["|"+names[0]], 3)
	assert.True(t, bytes.Equal(big, got["|"+names[0]][2]), "1 MB message")
	require.Len(t, got["r2pat:*|r2pat:\x00x"], 3)
	for i, p := range payloads {
		assert.True(t, bytes.Equal(p, got["r2pat:*|r2pat:\x00x"][i]), "pmessage %d", i)
	}
	assert.Zero(t, sub.Stats().Lost)
}
