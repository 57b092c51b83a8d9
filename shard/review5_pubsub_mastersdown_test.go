package shard_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// With every cluster master down, a channel has no master to go to and
// Subscribe returns ErrNoNodes at once; the error said only that, hiding
// why the masters could not be used (refused dials, a lost connection,
// wrong credentials), which the subscription knew. It now wraps each
// master's failure as a *NodeError too.
func TestReview5PubSubNoMasterLeftKeepsTheCauses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster")
	}
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	c := newClient(t, clusterConfig(rc.Seeds()...))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sub, err := c.Subscribe(ctx, "r5m:x")
	require.NoError(t, err)
	defer sub.Close()
	masters := rc.Masters()
	require.Len(t, masters, 3)
	var addrs []string
	for _, m := range masters {
		addrs = append(addrs, m.Addr)
		require.NoError(t, m.Kill())
	}

	for _, name := range []string{"r5m:y", "r5m:z"} {
		err = sub.Subscribe(ctx, name)
		require.ErrorIs(t, err, shard.ErrNoNodes, name)
		assert.NoError(t, ctx.Err(), "returned before its ctx ended")
		var ne *shard.NodeError
		if assert.True(t, errors.As(err, &ne), "%s: a master's failure is wrapped: %v", name, err) {
			assert.True(t, slices.Contains(addrs, ne.Node.Addr), "%s: %v", name, ne.Node)
			assert.Error(t, ne.Err)
		}
	}
}
