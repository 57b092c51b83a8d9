package shard_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard"
)

// TestReview20PubSubAuthFailureAtRedialIsTyped: the subscription's
// connection is killed after the user's password changed; its dial again
// is refused. A Subscribe that needs that node fails with an error that
// says so (pool.ErrAuth), not one that reads as the node being down, and
// the password appears nowhere in it.
func TestReview20PubSubAuthFailureAtRedialIsTyped(t *testing.T) {
	const user, pw, newPw = "r20auth", "r20auth-secret", "r20auth-other"
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	servers := redistest.StartNTB(t, 1, redistest.Options{})
	srv := servers[0]
	_, err := srv.Do("ACL", "SETUSER", user, "on", ">"+pw, "~*", "&*", "+@all")
	require.NoError(t, err)
	cfg := ringConfig(servers)
	cfg.Pool.Username, cfg.Pool.Password = user, pw
	c := newClient(t, cfg)
	sub, err := c.Subscribe(ctx, "r20auth:a")
	require.NoError(t, err)
	defer sub.Close()

	_, err = srv.Do("ACL", "SETUSER", user, "resetpass", ">"+newPw)
	require.NoError(t, err)
	_, err = srv.Do("CLIENT", "KILL", "TYPE", "pubsub")
	require.NoError(t, err)
	waitFor(t, 20*time.Second, "a refused dial", func() bool { return sub.Stats().DialErrors > 0 })

	sctx, scancel := context.WithTimeout(ctx, 20*time.Second)
	defer scancel()
	err = sub.Subscribe(sctx, "r20auth:b")
	require.Error(t, err)
	t.Logf("%v", err)
	assert.True(t, errors.Is(err, pool.ErrAuth), "not an authentication failure: %v", err)
	assert.False(t, errors.Is(err, shard.ErrNodeDown), "reads as the node down: %v", err)
	assert.False(t, errors.Is(err, context.DeadlineExceeded), "waited until ctx ended: %v", err)
	var ne *shard.NodeError
	assert.True(t, errors.As(err, &ne), "no *NodeError")
	assert.NotContains(t, err.Error(), pw)
	assert.NotContains(t, err.Error(), newPw)
}
