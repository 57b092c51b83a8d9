package shard_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview14ForEachShardCallsAnEjectedShard: ForEachShard still calls a
// ring shard that auto-eject took out (a FLUSHALL or SCRIPT LOAD that
// skipped it would be missed when it comes back), and its call fails
// with a *NodeError that names it; the other shards run fn. Scan passes
// over it.
func TestReview14ForEachShardCallsAnEjectedShard(t *testing.T) {
	c, rr, servers := autoEjectRing(t)
	ctx := context.Background()
	require.NoError(t, servers[1].Kill())
	waitFor(t, 20*time.Second, "the dead shard to be ejected", func() bool { return rr.Ejected(1) })

	ran := make(chan string, 3)
	err := c.ForEachShard(ctx, func(ctx context.Context, n shard.Node, conn redis.Conn) error {
		if _, err := conn.Do("PING"); err != nil {
			return err
		}
		ran <- n.Addr
		return nil
	})
	close(ran)
	var got []string
	for a := range ran {
		got = append(got, a)
	}
	assert.ElementsMatch(t, []string{servers[0].Addr, servers[2].Addr}, got, "fn ran on the shards in the ring")
	require.Error(t, err, "the ejected shard's call fails")
	var joined interface{ Unwrap() []error }
	require.True(t, errors.As(err, &joined), "%v", err)
	errs := joined.Unwrap()
	require.Len(t, errs, 1, "%v", err)
	var ne *shard.NodeError
	require.True(t, errors.As(errs[0], &ne), "%v", errs[0])
	assert.Equal(t, servers[1].Addr, ne.Node.Addr)

	_, err = c.Do(ctx, "SET", "after-eject", "v")
	require.NoError(t, err)
	sc := c.Scan(shard.ScanOptions{})
	var keys []string
	for sc.Next(ctx) {
		keys = append(keys, sc.Key())
	}
	require.NoError(t, sc.Err(), "Scan passes over the ejected shard")
	assert.Contains(t, keys, "after-eject")
}
