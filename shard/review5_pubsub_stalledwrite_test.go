package shard_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A write to a node that does not read (here: stopped, its socket
// buffers full) blocks, under the subscription's lock, until the pool's
// WriteTimeout (or the reader's deadline). Close waited for that lock,
// so it hung as long as the write did. Close closes the connections first, which ends the write at
// once.
func TestReview5PubSubCloseEndsAStalledWrite(t *testing.T) {
	const writeTimeout = 40 * time.Second
	c0, servers := startRing(t, 1)
	c0.Close()
	cfg := ringConfig(servers)
	cfg.Pool.WriteTimeout = writeTimeout
	c := newClient(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// The reader's own deadline (PingInterval+PingTimeout) also ends a
	// stalled write, by closing the connection: made long, as a
	// subscription with rare health checks has it.
	sub, err := c.NewSubscription(shard.SubscriptionOptions{PingInterval: writeTimeout, PingTimeout: writeTimeout})
	require.NoError(t, err)
	defer sub.Close()
	require.NoError(t, sub.Subscribe(ctx, "r5w:a"))
	require.Equal(t, 1, sub.Stats().Connections)

	require.NoError(t, servers[0].Pause())
	t.Cleanup(func() { _ = servers[0].Resume() })
	// Far more than the socket buffers of both ends hold.
	big := make([]string, 32)
	for i := range big {
		big[i] = fmt.Sprintf("r5w:%d:%s", i, strings.Repeat("x", 1<<20))
	}

	h := shard.HoldSubscription(sub)
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		sub.Close()
	}()
	start := time.Now()
	werr := h.Review5Subscribe(servers[0].Addr, big...)
	took := time.Since(start)
	h.Release()
	select {
	case <-closed:
	case <-time.After(2 * writeTimeout):
		t.Fatal("Close did not return")
	}
	assert.Error(t, werr, "the write ended by Close")
	assert.Less(t, took, writeTimeout/2, "the write lasted until its WriteTimeout: Close waited for it")
}
