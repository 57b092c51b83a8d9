package shard_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// While the placement loop writes to a node that does not read (stopped,
// its socket buffers full), it holds the subscription's lock until the
// write's deadline (the pool's WriteTimeout, or the reader's). Every other
// call on the subscription waited for that lock whatever its ctx said:
// an Unsubscribe, Subscribe or Ping given 300 ms hung for the whole
// WriteTimeout. Each now gives up when its ctx ends; Close ends the write.
func TestReview7PubSubCallsBoundedByCtxBehindAStalledWrite(t *testing.T) {
	const writeTimeout = 40 * time.Second
	sub, server := longWriteSubscription(t, writeTimeout)
	defer sub.Close()
	// The write the placement loop would make, under the lock.
	h, big := stallWrite(t, sub, server, "r7sw")
	written := make(chan error, 1)
	go func() {
		err := h.Review5Subscribe(server.Addr, big...)
		h.Release()
		written <- err
	}()

	for _, tc := range []struct {
		name string
		call func(context.Context) error
	}{
		{"Unsubscribe", func(ctx context.Context) error { return sub.Unsubscribe(ctx, "r7sw:a") }},
		{"PUnsubscribe all", func(ctx context.Context) error { return sub.PUnsubscribe(ctx) }},
		{"Subscribe", func(ctx context.Context) error { return sub.Subscribe(ctx, "r7sw:b") }},
		{"SSubscribe", func(ctx context.Context) error { return sub.SSubscribe(ctx, "r7sw:c") }},
		{"Ping", func(ctx context.Context) error { return sub.Ping(ctx, "x") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cctx, ccancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer ccancel()
			done := make(chan error, 1)
			start := time.Now()
			go func() { done <- tc.call(cctx) }()
			select {
			case err := <-done:
				assert.ErrorIs(t, err, context.DeadlineExceeded)
				assert.Less(t, time.Since(start), writeTimeout/4)
			case <-time.After(writeTimeout / 4):
				t.Errorf("%s with a 300ms ctx still waiting after %v, behind the stalled write", tc.name, writeTimeout/4)
			}
		})
	}

	closed := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(closed)
		sub.Close()
	}()
	select {
	case <-closed:
		assert.Less(t, time.Since(start), writeTimeout/4, "Close waited for the write")
	case <-time.After(2 * writeTimeout):
		t.Fatal("Close did not return")
	}
	select {
	case err := <-written:
		assert.Error(t, err, "the write ended by Close")
	case <-time.After(writeTimeout):
		t.Fatal("the write did not end")
	}
}
