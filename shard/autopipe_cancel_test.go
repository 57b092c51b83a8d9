package shard_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// queuedCall runs one command on c and hands its error over. Its name
// marks its goroutine in stack dumps (pipelineWaiters).
func queuedCall(ctx context.Context, c *shard.Client, out chan<- error, args ...any) {
	_, err := c.Do(ctx, args[0].(string), args[1:]...)
	out <- err
}

// stacks returns the stack of every goroutine, one per element.
func stacks() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Split(string(buf[:n]), "\n\n")
		}
		buf = make([]byte, 2*len(buf))
	}
}

// goroutineIn reports whether the stack of some goroutine contains every
// one of parts (function names, or a state such as "[chan send").
func goroutineIn(parts ...string) bool {
	for _, g := range stacks() {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(g, p)
		}
		if all {
			return true
		}
	}
	return false
}

// pipelineWaiters counts the queuedCall goroutines that wait in an
// automatic pipeline for their result: their command is queued or sent.
func pipelineWaiters() int {
	n := 0
	for _, g := range stacks() {
		if strings.Contains(g, "[select") && strings.Contains(g, "shard.(*Client).autoRoundTrip") && strings.Contains(g, "shard_test.queuedCall") {
			n++
		}
	}
	return n
}

// writerConnecting reports whether a pipeline's writer is borrowing a
// connection: it holds a batch it has not written.
func writerConnecting() bool {
	return goroutineIn("shard.(*autoPipe).connect")
}

// writerIdle reports whether a pipeline's writer waits for commands, with
// everything it took written.
func writerIdle() bool {
	for _, g := range stacks() {
		if strings.Contains(g, "[select") && strings.Contains(g, "shard.(*autoPipe).write(") &&
			!strings.Contains(g, "shard.(*autoPipe).connect") && !strings.Contains(g, "shard.(*pipeConn).") {
			return true
		}
	}
	return false
}

// cappedPipeClient returns a client of one server whose pool has a single
// connection, every single command going through the pipeline, and a
// plain connection to the server.
func cappedPipeClient(t *testing.T) (*shard.Client, *redistest.Server, redis.Conn) {
	t.Helper()
	servers := redistest.StartNTB(t, 1, redistest.Options{})
	cfg := ringConfig(servers)
	cfg.Health.Interval = -1 // no PING borrowing the one connection
	cfg.Pool.MaxActive, cfg.Pool.Wait = 1, true
	// The writer waits up to a read timeout for the connection: far
	// longer than the test needs on a loaded machine.
	cfg.Pool.ReadTimeout = 30 * time.Second
	c := newClient(t, cfg)
	shard.AlwaysPipeline(c)
	plain, err := redis.Dial("tcp", servers[0].Addr)
	require.NoError(t, err)
	t.Cleanup(func() { plain.Close() })
	return c, servers[0], plain
}

// holdTheConnection has a BLPOP take the pool's only connection until
// release is called, which waits for BLPOP to return.
func holdTheConnection(t *testing.T, c *shard.Client, server *redistest.Server, plain redis.Conn) (release func()) {
	t.Helper()
	blocked := make(chan error, 1)
	go func() {
		_, err := c.Do(context.Background(), "BLPOP", "apc:hold", 0)
		blocked <- err
	}()
	waitFor(t, 10*time.Second, "BLPOP to wait on the server", func() bool {
		list, err := server.Do("CLIENT", "LIST")
		return err == nil && strings.Contains(list, "cmd=blpop")
	})
	return func() {
		t.Helper()
		_, err := plain.Do("LPUSH", "apc:hold", "go")
		require.NoError(t, err)
		require.NoError(t, <-blocked)
	}
}

// assertNotRun checks, through the pipeline (behind whatever it was given
// before) and on a plain connection, that key was never incremented.
func assertNotRun(t *testing.T, c *shard.Client, plain redis.Conn, key string) {
	t.Helper()
	v, err := c.Do(context.Background(), "GET", key)
	require.NoError(t, err)
	assert.Nil(t, v, "the INCR whose caller gave up before it was written ran")
	v, err = plain.Do("GET", key)
	require.NoError(t, err)
	assert.Nil(t, v, "the INCR whose caller gave up before it was written ran")
}

// A command whose caller gives up while it waits in the pipeline's queue
// behind a batch the writer cannot write yet is never written: the caller
// was told it failed, so it must not run (an INCR the application then
// retries would count twice).
func TestAutoPipelineCancelledWhileQueuedIsNotSent(t *testing.T) {
	c, server, plain := cappedPipeClient(t)
	release := holdTheConnection(t, c, server, plain)

	// A GET the writer takes and holds while it waits for the connection.
	first := make(chan error, 1)
	go queuedCall(context.Background(), c, first, "GET", "apc:other")
	waitFor(t, 10*time.Second, "the writer to wait for a connection", func() bool {
		return writerConnecting() && pipelineWaiters() == 1
	})
	// The INCR queues behind it.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	incr := make(chan error, 1)
	go queuedCall(ctx, c, incr, "INCR", "apc:n")
	waitFor(t, 10*time.Second, "the INCR to queue", func() bool { return pipelineWaiters() == 2 })
	cancel()
	err := <-incr
	require.ErrorIs(t, err, context.Canceled)
	assert.NotContains(t, err.Error(), "may have run", "it was not sent")

	release()
	require.NoError(t, <-first)
	assertNotRun(t, c, plain, "apc:n")
}

// Likewise a command the writer has taken into a batch but not written
// yet (it waits for a connection) when its caller gives up.
func TestAutoPipelineCancelledBeforeItsBatchIsWrittenIsNotSent(t *testing.T) {
	c, server, plain := cappedPipeClient(t)
	release := holdTheConnection(t, c, server, plain)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	incr := make(chan error, 1)
	go queuedCall(ctx, c, incr, "INCR", "apc:n")
	waitFor(t, 10*time.Second, "the writer to wait for a connection with the INCR", func() bool {
		return writerConnecting() && pipelineWaiters() == 1
	})
	cancel()
	err := <-incr
	require.ErrorIs(t, err, context.Canceled)
	assert.NotContains(t, err.Error(), "may have run", "it was not sent")

	release()
	assertNotRun(t, c, plain, "apc:n")
}

// A command already written when its caller gives up may run: the error
// says so, and still matches the context's error.
func TestAutoPipelineCancelledAfterItWasSentMayHaveRun(t *testing.T) {
	servers := redistest.StartNTB(t, 1, redistest.Options{})
	server := servers[0]
	cfg := ringConfig(servers)
	cfg.Health.Interval = -1
	cfg.Pool.ReadTimeout = 30 * time.Second // the reader waits out the pause
	c := newClient(t, cfg)
	shard.AlwaysPipeline(c)
	_, err := c.Do(context.Background(), "DEL", "apc:sent")
	require.NoError(t, err)

	pauseUntilCleanup(t, server)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	incr := make(chan error, 1)
	go queuedCall(ctx, c, incr, "INCR", "apc:sent")
	waitFor(t, 10*time.Second, "the INCR to be written", func() bool {
		return pipelineWaiters() == 1 && writerIdle()
	})
	cancel()
	err = <-incr
	require.ErrorIs(t, err, context.Canceled)
	assert.Contains(t, err.Error(), "may have run")
	assert.False(t, errors.Is(err, context.DeadlineExceeded))
	require.NoError(t, server.Resume())

	plain, err := redis.Dial("tcp", server.Addr)
	require.NoError(t, err)
	defer plain.Close()
	waitFor(t, 10*time.Second, "the INCR that was sent to run", func() bool {
		n, err := redis.Int(plain.Do("GET", "apc:sent"))
		return err == nil && n == 1
	})
}
