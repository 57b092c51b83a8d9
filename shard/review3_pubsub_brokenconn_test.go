package shard_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Ping and Unsubscribe on a connection that broke before the
// subscription noticed return the node's error, a *NodeError naming the
// node and wrapping the network error, like every other call of the
// package: they returned the bare network error.
func TestReview3PubSubBrokenConnErrorsAreNodeErrors(t *testing.T) {
	_, sub, servers := quietSubscription(t, 1)
	srv := servers[0]
	ctx := context.Background()
	defer sub.Close()
	require.NoError(t, sub.Subscribe(ctx, "r3b:a", "r3b:b"))

	h := shard.HoldSubscription(sub)
	released := false
	defer func() {
		if !released {
			h.Release()
		}
	}()
	_, err := srv.Do("CLIENT", "KILL", "TYPE", "pubsub")
	require.NoError(t, err)
	waitFor(t, 10*time.Second, "the reader to see the connection fail", h.Review3ConnsFailed)

	errUnsub := h.Review3Unsubscribe("r3b:a")
	errPing := h.Review3Ping("hello")
	h.Release()
	released = true

	for what, err := range map[string]error{"Unsubscribe": errUnsub, "Ping": errPing} {
		var ne *shard.NodeError
		if assert.True(t, errors.As(err, &ne), "%s: %#v", what, err) {
			assert.Equal(t, srv.Addr, ne.Node.Addr, what)
			assert.NotNil(t, ne.Err, what)
		}
	}
	// The subscription goes on with the name that stays.
	waitFor(t, 10*time.Second, "r3b:b subscribed again", func() bool {
		return numSub(t, srv, "NUMSUB", "r3b:b") == 1
	})
	assert.Equal(t, 1, sub.Stats().Channels)
}
