package shard_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/shard"
)

// A node lost while a Subscribe of many names waits for it: the error
// names the node once, as documented (one error per failing node), not
// once per name (3,000 identical lines, megabytes for a large
// subscription).
func TestReview17PubSubLostNodeReportedOncePerNode(t *testing.T) {
	c, servers := startRing(t, 1)
	srv := servers[0]
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sub, err := c.NewSubscription(shard.SubscriptionOptions{})
	require.NoError(t, err)
	defer sub.Close()
	require.NoError(t, sub.Subscribe(ctx, "r17lost:first"))
	require.NoError(t, srv.Pause())
	names := make([]string, 3000)
	for i := range names {
		names[i] = fmt.Sprintf("r17lost:%d", i)
	}
	done := make(chan error, 1)
	go func() { done <- sub.Subscribe(ctx, names...) }()
	waitFor(t, 10*time.Second, "the names added", func() bool { return sub.Stats().Channels == len(names)+1 })
	require.NoError(t, srv.Kill())
	var serr error
	select {
	case serr = <-done:
	case <-ctx.Done():
		t.Fatal("Subscribe never returned after its node was killed")
	}
	require.Error(t, serr)
	var ne *shard.NodeError
	require.ErrorAs(t, serr, &ne)
	assert.Equal(t, srv.Addr, ne.Node.Addr)
	msg := serr.Error()
	assert.Equal(t, 1, strings.Count(msg, "node shard-0 ("), "the node named once in %d bytes of error", len(msg))
	if u, ok := serr.(interface{ Unwrap() []error }); ok {
		assert.Len(t, u.Unwrap(), 1)
	} else {
		assert.NotNil(t, errors.Unwrap(serr))
	}
}
