package shard_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// pausedPipelineClient returns a client that sends every command through
// the automatic pipeline, with a read timeout of 30 s (and writeTimeout
// when not 0), connected to a server that then answers nothing until the
// test ends; the client is closed then too. With stop the server process
// is stopped (SIGSTOP): nothing is read, and a write fills the socket's
// buffers. Otherwise it runs under CLIENT PAUSE ... ALL: it reads every
// command (so any number fit) and runs none.
func pausedPipelineClient(t *testing.T, writeTimeout time.Duration, stop bool) *shard.Client {
	t.Helper()
	server := redistest.StartTB(t, redistest.Options{})
	cfg := faultConfig(server.Addr, 30*time.Second)
	if writeTimeout != 0 {
		cfg.Pool.WriteTimeout = writeTimeout
	}
	c, err := shard.New(context.Background(), cfg)
	require.NoError(t, err)
	shard.AlwaysPipeline(c)
	_, err = c.Do(context.Background(), "SET", "review5:warm", "1") // dial while it answers
	require.NoError(t, err)
	if !stop {
		_, err := server.Do("CLIENT", "PAUSE", "600000", "ALL")
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() }) // the server is stopped by pid at the end
		return c
	}
	require.NoError(t, server.Pause())
	t.Cleanup(func() {
		c.Close()
		require.NoError(t, server.Resume())
	})
	return c
}

// Close returns promptly while an automatic pipeline's writer is stuck
// writing a large value to a hung (stopped) server, with a write timeout
// of 30 s: the caller gets an error wrapping ErrClosed. Close used to wait
// for the writer, which the closing of the connections after the 50 ms
// grace never reached (only replies being read were cut short), so it
// took the whole write timeout.
func TestReview5CloseDoesNotWaitForAStuckPipelineWrite(t *testing.T) {
	c := pausedPipelineClient(t, 30*time.Second, true)
	ctx := context.Background()
	value := strings.Repeat("v", 32<<20)
	done := make(chan error, 1)
	go func() {
		_, err := c.Do(ctx, "SET", "review5:big", value)
		done <- err
	}()
	waitFor(t, 10*time.Second, "the writer to be stuck writing", writerStuckInWrite)

	start := time.Now()
	closed := make(chan struct{})
	go func() {
		c.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close still waits for the stuck write after 10 s")
	}
	t.Logf("Close took %v", time.Since(start))
	select {
	case err := <-done:
		require.Error(t, err)
		require.True(t, errors.Is(err, shard.ErrClosed), "the caller got %v, want an error wrapping ErrClosed", err)
	case <-time.After(10 * time.Second):
		t.Fatal("the caller never returned")
	}
}

// writerWaitsForItsReader reports whether an automatic pipeline's writer
// waits for room in its reader's queue.
func writerWaitsForItsReader() bool {
	return goroutineIn("[chan send", "shard.(*pipeConn).send")
}

// Close returns promptly while an automatic pipeline's writer waits for
// room in its reader's queue (4096 commands sent to a hung server await
// their replies), with a read timeout of 30 s; every caller returns with
// an error wrapping ErrClosed. Close used to wait until the reader's read
// timed out.
func TestReview5CloseDoesNotWaitForAPipelineWaitingForItsReader(t *testing.T) {
	c := pausedPipelineClient(t, 0, false)
	ctx := context.Background()
	const callers = 4096 + 200
	done := make(chan error, callers)
	for range callers {
		go queuedCall(ctx, c, done, "INCR", "review5:count")
	}
	waitFor(t, 30*time.Second, "the writer to wait for its reader", writerWaitsForItsReader)

	closed := make(chan struct{})
	go func() {
		c.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close still waits for the pipeline after 10 s")
	}
	for i := range callers {
		select {
		case err := <-done:
			if !errors.Is(err, shard.ErrClosed) {
				t.Fatalf("caller %d got %v, want an error wrapping ErrClosed", i, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%d of %d callers never returned", callers-i, callers)
		}
	}
}
