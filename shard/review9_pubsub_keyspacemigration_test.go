package shard_test

import (
	"context"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A server emits the keyspace events of the keys it holds. During a
// migration the keys not moved yet stay on the old topology's nodes until
// the mover or their first use takes them: a key that expires there
// meanwhile emits its event there. Once the client routed by the new
// topology, the keyspace subscription listened to the new nodes alone
// and lost every event of the keys still waiting on the old ones. It
// listens to both until the migration ends, and leaves the old nodes
// then.
func TestReview9PubSubKeyspaceFollowsBothSidesOfAMigration(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	from, to := ringConfig(servers[:1]), ringConfig(servers[1:])
	c := newClient(t, from)

	sub, err := c.SubscribeKeyspace(ctx, shard.KeyspaceOptions{Patterns: []string{"__keyevent@*__:expired"}, Enable: "Ex"})
	require.NoError(t, err)
	defer sub.Close()

	_, err = c.Do(ctx, "SET", "waiting", "v", "PX", 1500)
	require.NoError(t, err)
	require.NoError(t, c.StartMigration(ctx, to))
	require.NoError(t, c.ArmMigration())
	// The key is not touched: it stays on the old node, where it expires.
	n, err := servers[0].Do("EXISTS", "waiting")
	require.NoError(t, err)
	require.Equal(t, "1", n, "the key waits on the old node")

	rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
	defer rcancel()
	var got []string
	for len(got) == 0 {
		v, err := sub.Receive(rctx)
		require.NoError(t, err, "no expired event for the key that waited on the old node")
		if m, ok := v.(redis.Message); ok {
			got = append(got, string(m.Data))
		}
	}
	assert.Equal(t, []string{"waiting"}, got)

	// Once the migration ends, the old node is left.
	require.NoError(t, c.FinishMigration())
	waitFor(t, 10*time.Second, "the old node's connection closed", func() bool {
		return sub.Stats().Connections == 1
	})
}
