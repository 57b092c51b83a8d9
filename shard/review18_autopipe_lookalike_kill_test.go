package shard_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// TestReview18AutoPipelineLookalikeThenKillIsNotReportedNotRun: a script
// whose error reply reads like the server's protocol error runs on a
// node's automatic pipeline while callers INCR a counter on the same
// connection; the server runs the INCRs written after the script, and
// then the connection is killed (CLIENT KILL) before their replies reach
// the client. The reader sees the script's reply, then the end of the
// stream: exactly what a real protocol error looks like. But the INCRs
// ran, so none of them may be reported as not run (a cluster client
// would send it again, counting it twice): every INCR that ran unacknowledged
// must fail with an outcome that says it may have run.
//
// The proxy between client and server holds the script's reply until the
// INCRs after it have run on the server, and drops what the server sent
// after it: the replies a killed connection loses.
func TestReview18AutoPipelineLookalikeThenKillIsNotReportedNotRun(t *testing.T) {
	server := redistest.StartTB(t, redistest.Options{})
	marker := []byte("-ERR Protocol error: fake\r\n")
	var (
		mu       sync.Mutex
		dropping bool
		held     = make(chan struct{})
		release  = make(chan struct{})
		relOnce  sync.Once
	)
	proxy := redistest.StartProxy(t, server.Addr, redistest.ProxyOptions{
		OnReply: func(chunk []byte, forward func([]byte) error) {
			mu.Lock()
			if dropping {
				mu.Unlock()
				return // lost with the killed connection
			}
			i := bytes.Index(chunk, marker)
			if i < 0 {
				mu.Unlock()
				_ = forward(chunk)
				return
			}
			dropping = true
			mu.Unlock()
			_ = forward(chunk[:i])
			close(held)
			<-release
			_ = forward(marker) // the rest of the chunk is dropped
		},
	})
	unhold := func() { relOnce.Do(func() { close(release) }) }
	t.Cleanup(unhold) // before the proxy closes

	cfg := ringConfig([]*redistest.Server{server})
	cfg.Shards[0].Addr = proxy.Addr
	cfg.Health.Interval = -1
	cfg.Pool.ReadTimeout = time.Minute // the held replies must not time out
	c := newClient(t, cfg)
	shard.AlwaysPipeline(c)
	ctx := context.Background()
	const counter = "r18lak:n"

	const callers = 8
	var (
		acked    atomic.Int64
		inflight atomic.Int64
		errs     = make([]error, callers)
		wg       sync.WaitGroup
	)
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				inflight.Add(1)
				_, err := c.Do(ctx, "INCR", counter)
				inflight.Add(-1)
				if err != nil {
					errs[i] = err
					return
				}
				acked.Add(1)
			}
		}()
	}
	waitFor(t, 30*time.Second, "the INCRs to flow", func() bool { return acked.Load() >= 200 })

	evalDone := make(chan error, 1)
	go func() {
		_, err := c.Do(ctx, "EVAL", "return redis.error_reply('ERR Protocol error: fake')", 1, "r18lak:s")
		evalDone <- err
	}()
	select {
	case <-held:
	case <-time.After(30 * time.Second):
		unhold()
		t.Fatal("the script's reply never came")
	}
	// Every caller now waits for the reply of an INCR written after the
	// script: wait until the server ran each of them.
	waitFor(t, 30*time.Second, "the INCRs written after the script to run", func() bool {
		s, err := server.Do("GET", counter)
		require.NoError(t, err)
		n, err := strconv.ParseInt(s, 10, 64)
		require.NoError(t, err)
		return inflight.Load() == callers && n == acked.Load()+callers
	})
	clients, err := server.Do("CLIENT", "LIST", "TYPE", "normal")
	require.NoError(t, err)
	require.Equal(t, 2, strings.Count(clients, "\n")+1, "one connection of the client, and this one: %s", clients)
	_, err = server.Do("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
	require.NoError(t, err)
	unhold()
	wg.Wait()
	evalErr := <-evalDone
	require.Error(t, evalErr)
	require.Contains(t, evalErr.Error(), "ERR Protocol error: fake")

	s, err := server.Do("GET", counter)
	require.NoError(t, err)
	n, err := strconv.ParseInt(s, 10, 64)
	require.NoError(t, err)
	ranUnacked := n - acked.Load()
	require.Positive(t, ranUnacked, "no INCR ran unacknowledged: the scenario did not happen")
	notRun := 0
	var msgs []string
	for _, err := range errs {
		var uo *shard.UnknownOutcomeError
		if !errors.As(err, &uo) {
			notRun++
		}
		msgs = append(msgs, fmt.Sprint(err))
	}
	assert.LessOrEqual(t, int64(notRun), callers-ranUnacked,
		"%d INCRs ran unacknowledged, yet %d of %d callers were told theirs did not run (or not that it may have run): %q", ranUnacked, notRun, callers, msgs)
}
