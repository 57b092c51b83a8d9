package shard_test

import (
	"context"
	"errors"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A script may return a status or an error of any length, and Redis
// sends it as one line. A line over 1 MiB was refused as a protocol
// error: the valid reply dropped its connection, the call was reported
// as of unknown outcome, and three such calls marked a healthy shard
// down. Such replies come back whole, as the status string or the
// redis.Error they are.
func TestReview20RingLongStatusAndErrorRepliesAreRead(t *testing.T) {
	servers := redistest.StartNTB(t, 1, redistest.Options{})
	c := newClient(t, ringConfig(servers))
	ctx := context.Background()
	const size = 3 << 20
	for range 2 {
		v, err := c.DoKey(ctx, "k", "EVAL", "return redis.status_reply(string.rep('s', ARGV[1]))", 0, size)
		require.NoError(t, err)
		s, ok := v.(string)
		require.True(t, ok, "a status reply is a string, got %T", v)
		assert.Len(t, s, size)

		_, err = c.DoKey(ctx, "k", "EVAL", "return redis.error_reply(string.rep('e', ARGV[1]))", 0, size)
		var re redis.Error
		require.True(t, errors.As(err, &re), "an error reply is a redis.Error: %v", err)
		assert.GreaterOrEqual(t, len(re), size)
	}
	for _, n := range c.Stats().Nodes {
		assert.False(t, n.Down, "%s marked down by valid replies", n.Node.Name)
		assert.Zero(t, n.Errors, "%s counted failures for valid replies", n.Node.Name)
	}
}
