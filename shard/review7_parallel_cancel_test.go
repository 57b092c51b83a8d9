package shard_test

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A pipeline large enough to be decoded in parallel (4096 commands,
// GOMAXPROCS 4) to a hung server, under a context that ends: Exec
// returned at the context's end, but its per-node workers had no
// canceller and went on waiting for the replies until the read timeout,
// holding their connections (and Close waited for them). They now stop
// when the context ends: once Exec has returned no worker is left, and
// every command fails with the context's error.
func TestReview7ParallelPipelineStopsWithItsContext(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	const readTimeout = 20 * time.Second
	server := redistest.StartTB(t, redistest.Options{})
	c := newClient(t, faultConfig(server.Addr, readTimeout))
	_, err := c.Do(context.Background(), "GET", "r7par:warm") // dial while it answers
	require.NoError(t, err)
	before := runtime.NumGoroutine()

	require.NoError(t, server.Pause())
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			assert.NoError(t, server.Resume())
		}
	}
	defer resume()

	for _, cancelIt := range []bool{false, true} {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		if cancelIt {
			ctx, cancel = context.WithCancel(context.Background())
			time.AfterFunc(300*time.Millisecond, cancel)
		}
		const n = 4096
		p := c.Pipeline()
		for range n {
			p.Send("GET", "r7par:k")
		}
		start := time.Now()
		res, err := p.Exec(ctx)
		took := time.Since(start)
		cancel()
		require.NoError(t, err)
		assert.Less(t, took, readTimeout/4, "Exec waited for the hung server")
		require.Len(t, res, n)
		want := context.DeadlineExceeded
		if cancelIt {
			want = context.Canceled
		}
		for i, r := range res {
			if !errors.Is(r.Err, want) {
				t.Fatalf("command %d: %v, want an error matching %v", i, r.Err, want)
			}
		}
		// Exec has returned: none of its workers may be left waiting.
		assert.False(t, parallelWorkerRunning(), "a worker of the batch outlived Exec (cancel %v)", cancelIt)
	}
	resume()
	// The client works once the server answers again.
	_, err = c.Do(context.Background(), "SET", "r7par:k", "v")
	require.NoError(t, err)
	waitFor(t, 5*time.Second, "the goroutines to settle", func() bool {
		return runtime.NumGoroutine() <= before
	})
}
