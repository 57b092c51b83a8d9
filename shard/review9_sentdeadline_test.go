package shard_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
)

// lapsedCtx is a context whose deadline passes the instant its command
// has been sent: its Deadline is a minute away until the client is about
// to read the reply (a frame of the client's receive is on the stack),
// and has passed from then on. Its Done channel is nil, as a context's
// is in effect when its timer has not fired yet. It makes the short
// window between a send and the read of its reply happen every time.
type lapsedCtx struct {
	context.Context
	passed *atomic.Bool
}

func (c lapsedCtx) Deadline() (time.Time, bool) {
	if !c.passed.Load() {
		pcs := make([]uintptr, 32)
		frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
		for {
			f, more := frames.Next()
			if strings.HasSuffix(f.Function, "shard.(*Client).receive") {
				c.passed.Store(true)
				break
			}
			if !more {
				break
			}
		}
	}
	if c.passed.Load() {
		return time.Now().Add(-time.Millisecond), true
	}
	return time.Now().Add(time.Minute), true
}

// A command whose deadline passes after it was sent may have run: the
// caller must be told so at once, and its connection must not be drained
// (a blocked BLPOP would be waited for up to the read timeout, past the
// caller's deadline) nor pooled with its reply unread.
func TestReview9DeadlinePassedAfterSendIsBoundedAndSaysMayHaveRun(t *testing.T) {
	servers := redistest.StartNTB(t, 1, redistest.Options{})
	cfg := ringConfig(servers)
	cfg.Pool = pool.Options{DialTimeout: time.Second, ReadTimeout: 5 * time.Second, WriteTimeout: time.Second}
	c := newClient(t, cfg)
	ctx := context.Background()
	_, err := c.Do(ctx, "SET", "review9:warm", "1")
	require.NoError(t, err)

	start := time.Now()
	_, err = c.Do(lapsedCtx{context.Background(), new(atomic.Bool)}, "BLPOP", "review9:q", "0")
	elapsed := time.Since(start)
	require.Error(t, err)
	require.True(t, errors.Is(err, context.DeadlineExceeded), "want a deadline error, got %v", err)
	require.Contains(t, err.Error(), "may have run", "the BLPOP was sent: %v", err)
	require.Less(t, elapsed, 2*time.Second, "the call outlived its deadline by the read timeout")

	// The BLPOP's connection is gone: an element pushed now is not popped
	// by it, and stays for the next reader.
	waitFor(t, 5*time.Second, "the blocked client to go away", func() bool {
		info, err := servers[0].Do("INFO", "clients")
		return err == nil && strings.Contains(info, "blocked_clients:0")
	})
	_, err = c.Do(ctx, "RPUSH", "review9:q", "v")
	require.NoError(t, err)
	got, err := c.Do(ctx, "LPOP", "review9:q")
	require.NoError(t, err)
	require.Equal(t, []byte("v"), got)
}
