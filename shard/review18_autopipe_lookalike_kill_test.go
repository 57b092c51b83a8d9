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
// lookalikeHold is a proxy in front of a server that passes replies on
// until one reads as the protocol error of lookalikeKillScript: it holds
// that one until unhold, then passes it on and drops every byte the
// server sends after it (the replies a killed connection loses).
type lookalikeHold struct {
	server *redistest.Server
	client *shard.Client
	held   chan struct{} // closed once the script's reply is held
	unhold func()
}

// lookalikeKillScript replies with an error that reads as the server's
// protocol error, and leaves the connection open.
const lookalikeKillScript = "return redis.error_reply('ERR Protocol error: fake')"

// With sendHold > 0 the proxy also holds what the client sends once it
// has passed on sendHold bytes (the chunk that crosses it whole), until
// unhold: a write too large for the socket buffers then stays blocked.
func startLookalikeHold(t *testing.T, sendHold int) *lookalikeHold {
	t.Helper()
	h := &lookalikeHold{server: redistest.StartTB(t, redistest.Options{}), held: make(chan struct{})}
	marker := []byte("-ERR Protocol error: fake\r\n")
	var (
		mu       sync.Mutex
		dropping bool
		release  = make(chan struct{})
		relOnce  sync.Once
	)
	sent := 0
	proxy := redistest.StartProxy(t, h.server.Addr, redistest.ProxyOptions{
		OnSend: func(chunk []byte) bool {
			mu.Lock()
			hold := sendHold > 0 && sent >= sendHold
			sent += len(chunk)
			mu.Unlock()
			if hold {
				<-release
			}
			return true
		},
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
			close(h.held)
			<-release
			_ = forward(marker) // the rest of the chunk is dropped
		},
	})
	h.unhold = func() { relOnce.Do(func() { close(release) }) }
	t.Cleanup(h.unhold) // before the proxy closes

	cfg := ringConfig([]*redistest.Server{h.server})
	cfg.Shards[0].Addr = proxy.Addr
	cfg.Health.Interval = -1
	cfg.Pool.ReadTimeout = time.Minute  // the held replies must not time out
	cfg.Pool.WriteTimeout = time.Minute // nor the held writes
	h.client = newClient(t, cfg)
	return h
}

// waitHeld waits until the script's reply is held.
func (h *lookalikeHold) waitHeld(t *testing.T) {
	t.Helper()
	select {
	case <-h.held:
	case <-time.After(30 * time.Second):
		h.unhold()
		t.Fatal("the script's reply never came")
	}
}

// counter returns the value of key on the server (0 when unset).
func (h *lookalikeHold) counter(t *testing.T, key string) int64 {
	t.Helper()
	s, err := h.server.Do("GET", key)
	require.NoError(t, err)
	if s == "" {
		return 0
	}
	n, err := strconv.ParseInt(s, 10, 64)
	require.NoError(t, err)
	return n
}

// kill closes the client's one connection to the server (CLIENT KILL),
// then passes the held reply on.
func (h *lookalikeHold) kill(t *testing.T) {
	t.Helper()
	clients, err := h.server.Do("CLIENT", "LIST", "TYPE", "normal")
	require.NoError(t, err)
	require.Equal(t, 2, strings.Count(clients, "\n")+1, "one connection of the client, and this one: %s", clients)
	_, err = h.server.Do("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
	require.NoError(t, err)
	h.unhold()
}

func TestReview18AutoPipelineLookalikeThenKillIsNotReportedNotRun(t *testing.T) {
	h := startLookalikeHold(t, 0)
	c := h.client
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
		_, err := c.Do(ctx, "EVAL", lookalikeKillScript, 1, "r18lak:s")
		evalDone <- err
	}()
	h.waitHeld(t)
	// Every caller now waits for the reply of an INCR written after the
	// script: wait until the server ran each of them.
	waitFor(t, 30*time.Second, "the INCRs written after the script to run", func() bool {
		return inflight.Load() == callers && h.counter(t, counter) == acked.Load()+callers
	})
	h.kill(t)
	wg.Wait()
	evalErr := <-evalDone
	require.Error(t, evalErr)
	require.Contains(t, evalErr.Error(), "ERR Protocol error: fake")

	ranUnacked := h.counter(t, counter) - acked.Load()
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

// TestReview18PipelineLookalikeThenKillIsNotReportedNotRun: the same in a
// Pipeline: a script whose error reply reads as a protocol error, then
// INCRs, which the server runs before the connection is killed and their
// replies lost. None of them may be reported as not run.
func TestReview18PipelineLookalikeThenKillIsNotReportedNotRun(t *testing.T) {
	h := startLookalikeHold(t, 0)
	ctx := context.Background()
	const counter = "r18lkp:n"
	const incrs = 5
	p := h.client.Pipeline()
	p.Send("EVAL", lookalikeKillScript, 1, "r18lkp:s")
	for range incrs {
		p.Send("INCR", counter)
	}
	type result struct {
		res []shard.Result
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := p.Exec(ctx)
		done <- result{res, err}
	}()
	h.waitHeld(t)
	waitFor(t, 30*time.Second, "the INCRs after the script to run", func() bool { return h.counter(t, counter) == incrs })
	h.kill(t)
	r := <-done
	t.Logf("Exec: %v", r.err)
	require.Len(t, r.res, 1+incrs)
	require.ErrorContains(t, r.res[0].Err, "ERR Protocol error: fake")
	for i, res := range r.res[1:] {
		var uo *shard.UnknownOutcomeError
		assert.True(t, errors.As(res.Err, &uo), "INCR %d ran, but its error does not say it may have: %v", i, res.Err)
	}
}

// TestReview18ConnWatchedLookalikeThenKillIsNotReportedNotRun: the same
// on the connection a Conn holds for its WATCH: a script whose error
// reply reads as a protocol error, then INCRs, which the server runs
// before the connection is killed and their replies lost. None of them
// may be reported as not run.
func TestReview18ConnWatchedLookalikeThenKillIsNotReportedNotRun(t *testing.T) {
	h := startLookalikeHold(t, 0)
	const counter = "r18lkc:n"
	const incrs = 5
	conn := h.client.Conn()
	defer conn.Close()
	_, err := conn.Do("WATCH", "r18lkc:w")
	require.NoError(t, err)
	require.NoError(t, conn.Send("EVAL", lookalikeKillScript, 1, "r18lkc:s"))
	for range incrs {
		require.NoError(t, conn.Send("INCR", counter))
	}
	type result struct {
		replies []any
		err     error
	}
	done := make(chan result, 1)
	go func() {
		reply, err := conn.Do("") // every reply, with the first failure
		replies, _ := reply.([]any)
		done <- result{replies, err}
	}()
	h.waitHeld(t)
	waitFor(t, 30*time.Second, "the INCRs after the script to run", func() bool { return h.counter(t, counter) == incrs })
	h.kill(t)
	r := <-done
	t.Logf("Do: %v", r.err)
	require.Len(t, r.replies, 1+incrs)
	require.ErrorContains(t, r.replies[0].(error), "ERR Protocol error: fake")
	for i, reply := range r.replies[1:] {
		err, _ := reply.(error)
		var uo *shard.UnknownOutcomeError
		assert.True(t, errors.As(err, &uo), "INCR %d ran, but its result does not say it may have: %v", i, reply)
	}
}

// TestReview18PipelineLookalikeThenKillDuringWriteIsNotReportedNotRun:
// the same in a Pipeline whose write the kill cuts short: a script whose
// error reply reads as a protocol error, then INCRs, which the server
// runs, then a large SET still being written when the connection is
// killed. The reply read after the failed write reads as the server's
// refusal, but the INCRs ran: none may be reported as not run.
func TestReview18PipelineLookalikeThenKillDuringWriteIsNotReportedNotRun(t *testing.T) {
	const counter = "r18lkw:n"
	const incrs = 5
	first := [][]string{{"EVAL", lookalikeKillScript, "1", "r18lkw:s"}}
	for range incrs {
		first = append(first, []string{"INCR", counter})
	}
	n := 0
	for _, cmd := range first {
		n += len(fmt.Sprintf("*%d\r\n", len(cmd)))
		for _, a := range cmd {
			n += len(fmt.Sprintf("$%d\r\n%s\r\n", len(a), a))
		}
	}
	h := startLookalikeHold(t, n)
	ctx := context.Background()
	p := h.client.Pipeline()
	for _, cmd := range first {
		args := make([]any, len(cmd)-1)
		for i, a := range cmd[1:] {
			args[i] = a
		}
		p.Send(cmd[0], args...)
	}
	p.Send("SET", "r18lkw:big", strings.Repeat("x", 64<<20))
	type result struct {
		res []shard.Result
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := p.Exec(ctx)
		done <- result{res, err}
	}()
	h.waitHeld(t)
	waitFor(t, 30*time.Second, "the INCRs after the script to run", func() bool { return h.counter(t, counter) == incrs })
	h.kill(t)
	r := <-done
	t.Logf("Exec: %v", r.err)
	require.Len(t, r.res, 2+incrs)
	require.ErrorContains(t, r.res[0].Err, "ERR Protocol error: fake")
	for i, res := range r.res[1 : 1+incrs] {
		var uo *shard.UnknownOutcomeError
		assert.True(t, errors.As(res.Err, &uo), "INCR %d ran, but its error does not say it may have: %v", i, res.Err)
	}
	t.Logf("SET: %v", r.res[1+incrs].Err)
}
