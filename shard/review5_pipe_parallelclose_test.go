package shard_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// parallelWorkerRunning reports whether a worker of a batch decoded in
// parallel is running.
func parallelWorkerRunning() bool {
	return goroutineIn("shard.(*Client).roundTrip")
}

// Close while a large pipeline is decoded in parallel (4096 commands,
// GOMAXPROCS 4) on a hung server: Close waits for the batch's per-node
// workers, so those must be started under the client's life lock, as
// every other goroutine Close waits for is. runParallel added them to the
// group Close waits on without it (a WaitGroup grown from zero while Wait
// may run: the race detector reports it, and a worker could start after
// Close returned). Every command of the pipeline then ends with an error.
func TestReview5CloseDuringAParallelPipeline(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	server := redistest.StartTB(t, redistest.Options{})
	c, err := shard.New(context.Background(), faultConfig(server.Addr, time.Second))
	require.NoError(t, err)
	defer c.Close()
	ctx := context.Background()
	_, err = c.Do(ctx, "GET", "review5:warm") // dial while it answers
	require.NoError(t, err)

	require.NoError(t, server.Pause())
	defer func() { require.NoError(t, server.Resume()) }()
	const n = 4096
	type outcome struct {
		res []shard.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		p := c.Pipeline()
		for range n {
			p.Send("GET", "review5:k")
		}
		res, err := p.Exec(ctx)
		done <- outcome{res, err}
	}()
	waitFor(t, 10*time.Second, "a parallel worker to run", parallelWorkerRunning)
	require.NoError(t, c.Close())
	select {
	case o := <-done:
		require.NoError(t, o.err)
		require.Len(t, o.res, n)
		for i, r := range o.res {
			require.Error(t, r.Err, "command %d of a pipeline to a hung server", i)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Exec never returned")
	}
}
