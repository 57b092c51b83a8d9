package reshard_test

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/reshard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Ways a replyProxy breaks the first connection once it has passed on
// its replies.
const (
	replyStall = iota // it passes nothing more on: the old node's read times out
	replyCut          // it closes its side towards the old node: the old node reads EOF
	sendCut           // it passes every reply, and closes the connection and its listener at the next request
)

// replyProxy stands between an old node's MIGRATE and the new node
// (Options.Addrs maps the new node to it). It forwards every byte the old
// node sends; on the first connection it passes on only the first
// replies lines of the new node's answers (each RESTORE answers one line:
// +OK, or an error), then breaks that connection as mode says. The new
// node has then run every RESTORE the old node sent, its answer lost on
// the way back: a network that fails in the middle of a batch.
type replyProxy struct {
	addr    string
	ln      net.Listener
	backend string
	replies int
	mode    int
	onBreak func() // when set, runs as the first connection breaks

	first atomic.Bool // the first connection was taken
	broke atomic.Bool // the first connection was broken as mode says
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns []net.Conn
}

func startReplyProxy(t *testing.T, backend string, replies, mode int, onBreak func()) *replyProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &replyProxy{addr: ln.Addr().String(), ln: ln, backend: backend, replies: replies, mode: mode, onBreak: onBreak}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

func (p *replyProxy) close() {
	p.ln.Close()
	p.mu.Lock()
	for _, c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

func (p *replyProxy) track(c ...net.Conn) {
	p.mu.Lock()
	p.conns = append(p.conns, c...)
	p.mu.Unlock()
}

func (p *replyProxy) accept() {
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
		p.track(client, server)
		limited := !p.first.Swap(true)
		p.wg.Add(2)
		go func() { // the old node's requests
			defer p.wg.Done()
			buf := make([]byte, 64<<10)
			for {
				n, err := client.Read(buf)
				if n > 0 && limited && p.mode == sendCut && p.broke.Load() {
					p.ln.Close() // the new node is gone: no new connection either
					client.Close()
					server.Close()
					return
				}
				if n > 0 {
					if _, werr := server.Write(buf[:n]); werr != nil {
						return
					}
				}
				if err != nil {
					server.(*net.TCPConn).CloseWrite()
					return
				}
			}
		}()
		go func() { // the new node's replies
			defer p.wg.Done()
			buf := make([]byte, 64<<10)
			lines := 0
			passing := true
			for {
				n, err := server.Read(buf)
				chunk := buf[:n]
				if limited && n > 0 {
					// Pass on up to the end of the last line that may pass.
					for i, b := range chunk {
						if b != '\n' {
							continue
						}
						lines++
						if lines == p.replies {
							if p.onBreak != nil {
								p.onBreak()
							}
							if p.mode != sendCut {
								if _, werr := client.Write(chunk[:i+1]); werr != nil {
									return
								}
								passing = false
								if p.mode == replyCut {
									client.(*net.TCPConn).CloseWrite()
								}
							}
							p.broke.Store(true)
							if !passing {
								chunk = nil
							}
							break
						}
					}
				}
				if len(chunk) > 0 && passing {
					if _, werr := client.Write(chunk); werr != nil {
						return
					}
				}
				if err != nil {
					if passing {
						client.Close()
					}
					return
				}
			}
		}()
	}
}

// errorCount returns the count of error replies code that s gave (INFO
// errorstats).
func errorCount(t *testing.T, s *redistest.Server, code string) int {
	t.Helper()
	info, err := s.Do("INFO", "errorstats")
	require.NoError(t, err)
	for line := range strings.SplitSeq(info, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "errorstat_"+code+":count=")
		if ok {
			n, err := strconv.Atoi(rest)
			require.NoError(t, err)
			return n
		}
	}
	return 0
}

// movedOnServers counts the keys prefix:0..n-1 that hold their fill's
// value at the new node (newConn) and are gone from the old one (oldConn).
func movedOnServers(t *testing.T, oldConn, newConn redis.Conn, prefix string, n int) int {
	t.Helper()
	moved := 0
	for i := range n {
		k := fmt.Sprintf("%s:%d", prefix, i)
		v, err := redis.String(newConn.Do("GET", k))
		if err == redis.ErrNil {
			continue
		}
		require.NoError(t, err)
		old, err := redis.Int(oldConn.Do("EXISTS", k))
		require.NoError(t, err)
		if v == strconv.Itoa(i) && old == 0 {
			moved++
		}
	}
	return moved
}

// TestReview12MigrateIOErrorMidBatchCountsEveryKeyMoved: a batch's
// MIGRATE that fails with IOERR after its target took some of the keys
// (the network between the servers fails in the middle of the batch)
// has already moved those keys: the old node deleted each one the new
// node acknowledged, and the new node holds the rest too, their answers
// lost. The mover then moves the batch with DUMP/RESTORE. Every key must
// end at the new node once, none at the old one, and the report and the
// last progress must count each one as moved, none as busy: no client
// wrote a key at the new node.
func TestReview12MigrateIOErrorMidBatchCountsEveryKeyMoved(t *testing.T) {
	for _, tc := range []struct {
		name string
		mode int
	}{{"reply lost", replyStall}, {"connection closed", replyCut}} {
		t.Run(tc.name, func(t *testing.T) {
			const n, acked = 100, 30
			servers, from, to := moveAll(t)
			fill(t, from, "io", n)
			// SELECT's +OK, then the first acked RESTOREs' answers.
			proxy := startReplyProxy(t, servers[1].Addr, 1+acked, tc.mode, nil)
			var mu sync.Mutex
			var last reshard.Progress
			// The proxy's fault is for the mover's MIGRATE, not the arming's probe.
			rep, err := reshard.Move(context.Background(), reshard.Options{From: from, To: to, SkipClientCheck: true,
				Addrs: map[string]string{servers[1].Addr: proxy.addr}, SkipProbe: true, Batch: n, MaxBlock: time.Minute,
				Timeout: time.Second, Finish: true, Progress: func(p reshard.Progress) {
					mu.Lock()
					last = p
					mu.Unlock()
				}})
			require.NoError(t, err)
			require.True(t, proxy.broke.Load(), "the proxy broke the MIGRATE's connection")
			require.Equal(t, 1, errorCount(t, servers[0], "IOERR"), "the old node's MIGRATE failed with IOERR once")

			oldConn := newRawConn(t, servers[0])
			newConn := newRawConn(t, servers[1])
			size, err := redis.Int(newConn.Do("DBSIZE"))
			require.NoError(t, err)
			assert.Equal(t, n, size, "keys at the new node")
			oldSize, err := redis.Int(oldConn.Do("DBSIZE"))
			require.NoError(t, err)
			assert.Equal(t, 0, oldSize, "keys left at the old node")
			assert.Equal(t, n, movedOnServers(t, oldConn, newConn, "io", n), "keys at the new node with their value, gone from the old one")

			assert.EqualValues(t, n, rep.Moved, "Moved")
			assert.EqualValues(t, 0, rep.Busy, "Busy")
			assert.EqualValues(t, n, rep.Scanned, "Scanned")
			require.Len(t, rep.Flows, 1)
			assert.EqualValues(t, n, rep.Flows[0].Keys, "the flow's keys")
			mu.Lock()
			assert.True(t, last.Done, "the last progress")
			assert.EqualValues(t, n, last.Moved, "the last progress's Moved")
			mu.Unlock()
		})
	}
}

// TestReview12BusyBatchRetryFailureCountsTheBatchsMoves: a batch whose
// MIGRATE answers BUSYKEY has moved every key the new node did not have;
// the mover then settles the batch's keys one by one. When that fails
// (here the new node becomes unreachable from the old one, and refuses
// the mover's own RESTOREs, so that the DUMP/RESTORE that an IOERR falls
// back to fails as well), the Move fails, and its report must still count
// the keys the batch moved: they are at the new node and gone from the
// old one.
func TestReview12BusyBatchRetryFailureCountsTheBatchsMoves(t *testing.T) {
	const n = 100
	servers, from, to := moveAll(t)
	fill(t, from, "bk", n)
	newConn := newRawConn(t, servers[1])
	busyKeys := 0
	for i := 0; i < n; i += 7 {
		_, err := newConn.Do("SET", fmt.Sprintf("bk:%d", i), "new")
		require.NoError(t, err)
		busyKeys++
	}
	// The mover's RESTOREs run in a script, MIGRATE's do not.
	_, err := servers[1].Do("ACL", "SETUSER", "default", "-evalsha", "-eval")
	require.NoError(t, err)
	// SELECT's +OK and the batch's answers pass; the next MIGRATE, the
	// first key's own, meets a closed connection and a refused dial.
	proxy := startReplyProxy(t, servers[1].Addr, 1+n, sendCut, nil)
	var mu sync.Mutex
	var last reshard.Progress
	// The proxy's fault is for the mover's MIGRATE, not the arming's probe.
	rep, err := reshard.Move(context.Background(), reshard.Options{From: from, To: to, SkipClientCheck: true,
		Addrs: map[string]string{servers[1].Addr: proxy.addr}, SkipProbe: true, Batch: n, MaxBlock: time.Minute,
		Timeout: time.Second, Progress: func(p reshard.Progress) {
			mu.Lock()
			last = p
			mu.Unlock()
		}})
	require.Error(t, err)
	t.Logf("the error: %v", err)
	require.True(t, proxy.broke.Load(), "the proxy passed the batch's answers")
	require.NotNil(t, rep)

	oldConn := newRawConn(t, servers[0])
	moved := movedOnServers(t, oldConn, newConn, "bk", n)
	assert.Equal(t, n-busyKeys, moved, "keys the batch moved: every one the new node did not have")
	busy := 0
	for i := 0; i < n; i += 7 {
		k := fmt.Sprintf("bk:%d", i)
		v, err := redis.String(newConn.Do("GET", k))
		require.NoError(t, err)
		require.Equal(t, "new", v, "%s: the new node's copy stays", k)
		old, err := redis.Int(oldConn.Do("EXISTS", k))
		require.NoError(t, err)
		busy += 1 - old
	}
	assert.EqualValues(t, moved, rep.Moved, "Moved")
	assert.EqualValues(t, busy, rep.Busy, "Busy")
	var flowKeys int64
	for _, f := range rep.Flows {
		flowKeys += f.Keys
	}
	assert.EqualValues(t, moved, flowKeys, "the flows' keys")
	mu.Lock()
	assert.True(t, last.Done, "the last progress")
	assert.EqualValues(t, moved, last.Moved, "the last progress's Moved")
	mu.Unlock()
}

// TestReview12MigrateIOErrorThenFailedFallbackCountsTheBatchsMoves: a
// batch's MIGRATE fails with IOERR after the new node took some of its
// keys, and the DUMP/RESTORE that follows fails too (here another
// client holds the old node's writes paused past the batch's wait). The
// Move fails, and its report must still count the keys the MIGRATE
// moved: they are at the new node and gone from the old one.
func TestReview12MigrateIOErrorThenFailedFallbackCountsTheBatchsMoves(t *testing.T) {
	const n, acked = 100, 30
	servers, from, to := moveAll(t)
	fill(t, from, "iof", n)
	pauser := newRawConn(t, servers[0])
	t.Cleanup(func() { servers[0].Do("CLIENT", "UNPAUSE") })
	// Sent while the old node runs the MIGRATE: it runs right after it,
	// before the mover's next command.
	pauseErr := make(chan error, 1)
	proxy := startReplyProxy(t, servers[1].Addr, 1+acked, replyCut, func() {
		pauser.Send("CLIENT", "PAUSE", 20000, "WRITE")
		pauseErr <- pauser.Flush()
	})
	// The proxy's fault is for the mover's MIGRATE, not the arming's probe.
	rep, err := reshard.Move(context.Background(), reshard.Options{From: from, To: to, SkipClientCheck: true,
		Addrs: map[string]string{servers[1].Addr: proxy.addr}, SkipProbe: true, Batch: n, MaxBlock: time.Minute,
		Timeout: time.Second})
	require.Error(t, err)
	t.Logf("the error: %v", err)
	require.True(t, proxy.broke.Load(), "the proxy broke the MIGRATE's connection")
	require.NoError(t, <-pauseErr, "pausing the old node's writes")
	_, err = redis.String(pauser.Receive())
	require.NoError(t, err, "CLIENT PAUSE")
	_, err = pauser.Do("CLIENT", "UNPAUSE")
	require.NoError(t, err)
	require.NotNil(t, rep)

	oldConn := newRawConn(t, servers[0])
	newConn := newRawConn(t, servers[1])
	moved := movedOnServers(t, oldConn, newConn, "iof", n)
	assert.Equal(t, acked, moved, "keys the MIGRATE moved before its error")
	assert.EqualValues(t, moved, rep.Moved, "Moved")
	assert.EqualValues(t, 0, rep.Busy, "Busy")
	var flowKeys int64
	for _, f := range rep.Flows {
		flowKeys += f.Keys
	}
	assert.EqualValues(t, moved, flowKeys, "the flows' keys")
}
