package shard_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// errReview5NotPlaced is the user Router's own refusal.
var errReview5NotPlaced = errors.New("review5: this router places no 'nowhere:' name")

// review5Router sends every name to one node, except the "nowhere:" ones,
// which it refuses with its own error.
type review5Router struct{ node shard.Node }

func (r review5Router) Route(key string) (shard.Node, error) {
	if strings.HasPrefix(key, "nowhere:") {
		return shard.Node{}, errReview5NotPlaced
	}
	return r.node, nil
}

func (r review5Router) Nodes() []shard.Node { return []shard.Node{r.node} }

// A channel that the user's Router refuses to place: Subscribe said only
// ErrNoNodes ("no node can carry the names now"), hiding the Router's
// own error, the one cause the user can act on (Do returns it as is).
func TestReview5PubSubSubscribeKeepsTheRoutersError(t *testing.T) {
	servers := redistest.StartNTB(t, 1, redistest.Options{})
	base := ringConfig(servers)
	c := newClient(t, shard.Config{Router: review5Router{node: shard.Node{Name: "only", Addr: servers[0].Addr}},
		Pool: base.Pool, Health: base.Health})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	_, err := c.Do(ctx, "PUBLISH", "nowhere:a", "x")
	require.ErrorIs(t, err, errReview5NotPlaced, "Do gives the Router's error")

	sub, err := c.NewSubscription(shard.SubscriptionOptions{})
	require.NoError(t, err)
	defer sub.Close()
	err = sub.Subscribe(ctx, "nowhere:a")
	require.Error(t, err)
	assert.ErrorIs(t, err, errReview5NotPlaced, "the Router's own error is the cause")
	assert.ErrorIs(t, err, shard.ErrNoNodes, "still matchable as no node")
	assert.NoError(t, ctx.Err(), "returned before its ctx ended")

	// A name the Router places is not affected.
	require.NoError(t, sub.Subscribe(ctx, "somewhere:b"))
	v, err := sub.Receive(ctx)
	require.NoError(t, err)
	assert.Equal(t, redis.Subscription{Kind: "subscribe", Channel: "somewhere:b", Count: 2}, v)
}
