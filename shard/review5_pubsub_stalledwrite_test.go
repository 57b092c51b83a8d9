package shard_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// A write to a node that does not read (here: stopped, its socket
// buffers full) blocks, under the subscription's lock, until the pool's
// WriteTimeout (or the reader's deadline). Close waited for that lock,
// so it hung as long as the write did. Close closes the connections first, which ends the write at
// once.
func TestReview5PubSubCloseEndsAStalledWrite(t *testing.T) {
	const writeTimeout = 40 * time.Second
	sub, server := longWriteSubscription(t, writeTimeout)
	defer sub.Close()
	// The reader's own deadline (PingInterval+PingTimeout) also ends a
	// stalled write, by closing the connection: longWriteSubscription
	// makes it long.
	h, big := stallWrite(t, sub, server, "r5w")
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		sub.Close()
	}()
	start := time.Now()
	werr := h.Review5Subscribe(server.Addr, big...)
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
