package shard_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSentinelForEachShardFollowsReadOnlyMaster: ForEachShard (and
// ForEachMaster) whose function meets READONLY on a master demoted behind
// the Sentinels' back (they are dead and the periodic queries are off)
// makes the client look for the new master, as a command does: the next
// call runs there. Before, every later call went to the demoted master.
func TestSentinelForEachShardFollowsReadOnlyMaster(t *testing.T) {
	set, cfg := loneSentinel(t)
	c := newClient(t, cfg)
	ctx := context.Background()
	set1 := func(v string) error {
		return c.ForEachShard(ctx, func(ctx context.Context, _ shard.Node, conn redis.Conn) error {
			_, err := redis.DoContext(conn, ctx, "SET", "fe", v)
			return err
		})
	}
	require.NoError(t, set1("1"))
	_, next := unseenFailover(t, set)

	err := set1("2")
	var re redis.Error
	require.ErrorAs(t, err, &re)
	assert.True(t, strings.HasPrefix(string(re), "READONLY"), "%v", err)
	waitFor(t, 10*time.Second, "ForEachShard to reach the new master", func() bool { return set1("3") == nil })
	got, err := next.Do("GET", "fe")
	require.NoError(t, err)
	assert.Equal(t, "3", got)
	assert.Equal(t, next.Addr, c.Stats().Sentinel[0].Master)
}
