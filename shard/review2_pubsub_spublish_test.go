package shard_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/require"
)

// In ring mode SPUBLISH through the client, alone or in a pipeline, meets
// SSUBSCRIBE on the shard the channel hashes to, hash tags included.
func TestReview2PubSubRingSPublishMeetsSSubscribe(t *testing.T) {
	c, _ := startRing(t, 3)
	ctx := context.Background()
	var names []string
	for i := range 30 {
		names = append(names, fmt.Sprintf("{r2s:%d}:a", i), fmt.Sprintf("r2s:%d:{x%d}", i, i%7))
	}
	sub, err := c.SSubscribe(ctx, names...)
	require.NoError(t, err)
	defer sub.Close()
	p := c.Pipeline()
	for _, name := range names {
		p.Send("SPUBLISH", name, name)
	}
	res, err := p.Exec(ctx)
	require.NoError(t, err)
	require.Len(t, res, len(names))
	for i, r := range res {
		n, err := redis.Int(r.Reply, r.Err)
		require.NoError(t, err)
		require.Equal(t, 1, n, "SPUBLISH %s", names[i])
	}
	msgs, err := collect(ctx, sub, len(names), 10*time.Second)
	require.NoError(t, err)
	require.Len(t, msgs, len(names))
	for _, m := range msgs {
		require.Equal(t, m.Channel, string(m.Data))
	}
}
