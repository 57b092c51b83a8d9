package reshard_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/reshard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// slowReplyProxy stands between an old node's MIGRATE and the new node
// (Options.Addrs maps the new node to it): it forwards the old node's
// requests as they come, and each line of the new node's answers
// (+OK to SELECT, then one per RESTORE) delay after the previous one, as
// a new node behind a slow link, or too loaded to restore large values
// fast, answers. Each answer comes well within MIGRATE's timeout, which
// bounds each of its reads, not the whole command. onLine, when set, runs
// before the first line is passed on.
type slowReplyProxy struct {
	addr    string
	ln      net.Listener
	backend string
	delay   time.Duration
	onLine  func()
	lines   atomic.Int64 // answers passed on

	once  sync.Once
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns []net.Conn
}

func startSlowReplyProxy(t *testing.T, backend string, delay time.Duration, onLine func()) *slowReplyProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &slowReplyProxy{addr: ln.Addr().String(), ln: ln, backend: backend, delay: delay, onLine: onLine}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

func (p *slowReplyProxy) close() {
	p.ln.Close()
	p.mu.Lock()
	for _, c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

func (p *slowReplyProxy) accept() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		server, err := net.Dial("tcp", p.backend)
		if err != nil {
			client.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, client, server)
		p.mu.Unlock()
		p.wg.Add(2)
		go func() { // the old node's requests
			defer p.wg.Done()
			io.Copy(server, client)
			server.(*net.TCPConn).CloseWrite()
		}()
		go func() { // the new node's answers, a line every delay
			defer p.wg.Done()
			defer client.Close()
			r := bufio.NewReader(server)
			for {
				line, err := r.ReadBytes('\n')
				if len(line) > 0 {
					if p.onLine != nil {
						p.once.Do(p.onLine)
					}
					time.Sleep(p.delay) // the slow link: what is simulated, not a wait for a condition
					if _, werr := client.Write(line); werr != nil {
						return
					}
					p.lines.Add(1)
				}
				if err != nil {
					return
				}
			}
		}()
	}
}

// TestReview12SlowMigrateOfLargeValuesIsWaitedFor: MIGRATE's timeout
// bounds each of its I/O operations (its connection, each write of up to
// 64 KiB, each answer it reads), not the whole command, so a batch of
// large values to a new node that answers slowly legitimately takes
// several Timeouts. Here each of 10 values of 100 KiB is answered 400 ms
// after the previous one (4.4 s in all with SELECT's), each well within a
// Timeout of 1 s. The mover waited Timeout plus a second for the whole
// transaction: it gave up on the connection at 2 s while the old node
// went on moving, lost the count of the keys moved and failed the Move.
// It must wait for what such a MIGRATE may take, and count every key.
func TestReview12SlowMigrateOfLargeValuesIsWaitedFor(t *testing.T) {
	const n, size = 10, 100 << 10
	servers, from, to := moveAll(t)
	oldConn, err := redis.Dial("tcp", servers[0].Addr)
	require.NoError(t, err)
	defer oldConn.Close()
	values := make([][]byte, n)
	for i := range values {
		values[i] = make([]byte, size)
		_, err := rand.Read(values[i])
		require.NoError(t, err)
		_, err = oldConn.Do("SET", fmt.Sprintf("sl:%d", i), values[i])
		require.NoError(t, err)
	}
	proxy := startSlowReplyProxy(t, servers[1].Addr, 400*time.Millisecond, nil)
	start := time.Now()
	rep, err := reshard.Move(context.Background(), reshard.Options{From: from, To: to, SkipClientCheck: true, SkipProbe: true,
		Addrs: map[string]string{servers[1].Addr: proxy.addr}, Batch: n, MaxBlock: time.Minute,
		Timeout: time.Second, Finish: true})
	t.Logf("the Move took %v; %d answers passed on", time.Since(start), proxy.lines.Load())
	require.NoError(t, err)
	require.NotNil(t, rep)
	assert.Equal(t, 0, errorCount(t, servers[0], "IOERR"), "the old node's MIGRATE failed")
	assert.GreaterOrEqual(t, proxy.lines.Load(), int64(1+n), "answers passed on: SELECT's and each RESTORE's")

	newConn, err := redis.Dial("tcp", servers[1].Addr)
	require.NoError(t, err)
	defer newConn.Close()
	for i := range n {
		k := fmt.Sprintf("sl:%d", i)
		v, err := redis.Bytes(newConn.Do("GET", k))
		require.NoError(t, err, "%s at the new node", k)
		assert.Equal(t, values[i], v, "%s's value at the new node", k)
	}
	oldSize, err := redis.Int(oldConn.Do("DBSIZE"))
	require.NoError(t, err)
	assert.Equal(t, 0, oldSize, "keys left at the old node")
	assert.EqualValues(t, n, rep.Moved, "Moved")
	assert.EqualValues(t, 0, rep.Busy, "Busy")
	require.Len(t, rep.Flows, 1)
	assert.EqualValues(t, n, rep.Flows[0].Keys, "the flow's keys")
}

// TestReview12MigrateOfAHungOldNodeIsNotWaitedForever: the wait for a
// MIGRATE is bounded. An old node that stops (SIGSTOP) in the middle of
// a MIGRATE of one small value answers nothing more; the Move must fail
// within a few Timeouts, with the old node named, not wait for it.
func TestReview12MigrateOfAHungOldNodeIsNotWaitedForever(t *testing.T) {
	servers, from, to := moveAll(t)
	_, err := servers[0].Do("SET", "hung", "v")
	require.NoError(t, err)
	paused := make(chan error, 1)
	proxy := startSlowReplyProxy(t, servers[1].Addr, 0, func() { paused <- servers[0].Pause() })
	t.Cleanup(func() { servers[0].Resume() })
	const timeout = time.Second
	start := time.Now()
	// The proxy's fault is for the mover's MIGRATE, not the arming's probe.
	_, err = reshard.Move(context.Background(), reshard.Options{From: from, To: to, SkipClientCheck: true,
		Addrs: map[string]string{servers[1].Addr: proxy.addr}, SkipProbe: true, Timeout: timeout})
	took := time.Since(start)
	require.NoError(t, <-paused, "stopping the old node")
	require.NoError(t, servers[0].Resume())
	require.Error(t, err)
	t.Logf("after %v: %v", took, err)
	assert.Contains(t, err.Error(), servers[0].Addr, "names the old node")
	assert.Less(t, took, 20*timeout, "the Move waited for a hung old node")
}

// TestReview12MoveWithoutMemoryUsage: the mover measures each page of
// moving keys with MEMORY USAGE, to bound its wait for a MIGRATE. An old
// node whose user is not allowed MEMORY USAGE must still be moved from
// (without sizes: no bytes counted), as before it was measured; only a
// pace in bytes, which needs the sizes, fails, with the refusal.
func TestReview12MoveWithoutMemoryUsage(t *testing.T) {
	const n = 20
	ctx := context.Background()
	servers, from, to := moveAll(t)
	fill(t, from, "nm", n)
	_, err := servers[0].Do("ACL", "SETUSER", "default", "-memory")
	require.NoError(t, err)

	_, err = reshard.Move(ctx, reshard.Options{From: from, To: to, SkipClientCheck: true, BytesPerSecond: 1 << 20})
	require.Error(t, err, "a pace in bytes without MEMORY USAGE")
	assert.Contains(t, err.Error(), "NOPERM")

	rep, err := reshard.Move(ctx, reshard.Options{From: from, To: to, SkipClientCheck: true})
	require.NoError(t, err)
	assert.EqualValues(t, n, rep.Moved, "Moved")
	assert.Zero(t, rep.Bytes, "Bytes, not measured")
	require.NotNil(t, rep.Verify)
	assert.Zero(t, rep.Verify.Misplaced, "misplaced: %v", rep.Verify.Samples)
}
