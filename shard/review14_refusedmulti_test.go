package shard_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/shard"
)

// TestReview14BlockingAfterRefusedMultiIsNotWaitedFor: a ForEachShard
// function whose MULTI the server refused (here its ACL user may not run
// MULTI) is not in a transaction, so a BLPOP it sends after it blocks on
// the server. The lent connection took the BLPOP for one queued inside
// MULTI: when the function returned without its reply, the connection
// was given back by sending DISCARD and reading every pending reply, so
// ForEachShard waited up to the read timeout (a minute here) for the
// BLPOP, and a value pushed meanwhile was popped and thrown away. The
// connection must be closed at once instead.
func TestReview14BlockingAfterRefusedMultiIsNotWaitedFor(t *testing.T) {
	c, _ := noMultiRing(t)
	ctx := context.Background()

	returned := make(chan time.Time, 1)
	err := c.ForEachShard(ctx, func(ctx context.Context, n shard.Node, conn redis.Conn) error {
		defer func() { returned <- time.Now() }()
		if _, err := conn.Do("MULTI"); err == nil || !strings.Contains(err.Error(), "NOPERM") {
			return err // the test needs a refused MULTI
		}
		if err := conn.Send("BLPOP", "r14rm:q", 0); err != nil {
			return err
		}
		return conn.Flush()
	})
	done := time.Now()
	require.NoError(t, err)
	fnEnd := <-returned
	assert.Less(t, done.Sub(fnEnd), 20*time.Second,
		"ForEachShard waited for the reply of a BLPOP its function left unread")
	// Nothing is left blocked on the server to take what is pushed next.
	_, err = c.Do(ctx, "RPUSH", "r14rm:q", "x")
	require.NoError(t, err)
	n, err := redis.Int(c.Do(ctx, "LLEN", "r14rm:q"))
	require.NoError(t, err)
	assert.Equal(t, 1, n, "a BLPOP left blocked popped the value")
}
