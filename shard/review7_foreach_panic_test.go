package shard_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview7ForEachShardPanic: a ForEachShard function that panicked on
// the client's worker goroutine crashed the process, with nothing the
// caller could recover.
func TestReview7ForEachShardPanic(t *testing.T) {
	noLeaks(t)
	c, servers := startRing(t, 2)
	ctx := context.Background()
	var ran atomic.Int32
	var err error
	assert.NotPanics(t, func() {
		err = c.ForEachShard(ctx, func(ctx context.Context, n shard.Node, conn redis.Conn) error {
			if n.Name == "shard-0" {
				// A reply left unread, and a state changed: the
				// connection must not go back to the pool.
				_, _ = conn.Do("SELECT", "1")
				_ = conn.Send("SET", "r7fe:k", "left")
				_ = conn.Flush()
				panic(fmt.Errorf("review7: ForEachShard on %s", n.Name))
			}
			ran.Add(1)
			return nil
		})
	})
	require.Error(t, err)
	assert.Equal(t, int32(1), ran.Load(), "the other node's function ran")
	var ne *shard.NodeError
	require.ErrorAs(t, err, &ne)
	assert.Equal(t, "shard-0", ne.Node.Name)
	var perr *shard.PanicError
	require.ErrorAs(t, err, &perr)
	assert.Equal(t, "ForEachShard", perr.Callback)
	assert.EqualError(t, perr.Unwrap(), "review7: ForEachShard on shard-0")
	assert.Contains(t, string(perr.Stack), "TestReview7ForEachShardPanic")

	// The client stays usable, on database 0.
	for i := range 20 {
		k := fmt.Sprintf("r7fe:%d", i)
		_, err := c.Do(ctx, "SET", k, i)
		require.NoError(t, err)
	}
	for i := range 20 {
		got, err := redis.Int(c.Do(ctx, "GET", fmt.Sprintf("r7fe:%d", i)))
		require.NoError(t, err)
		assert.Equal(t, i, got)
	}
	keys := 0
	for _, s := range servers {
		n, err := s.Do("DBSIZE") // database 0
		require.NoError(t, err)
		var k int
		_, err = fmt.Sscan(n, &k)
		require.NoError(t, err)
		keys += k
	}
	assert.Equal(t, 20, keys, "every SET went to database 0")
	for _, st := range c.Stats().Nodes {
		assert.Equal(t, st.Pool.Active, st.Pool.Idle, "no connection of %s stays lent", st.Node)
	}
	done := make(chan error, 1)
	go func() { done <- c.Close() }()
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return")
	}
}
