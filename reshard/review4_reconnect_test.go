package reshard_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cutProxy forwards connections to backend. The first time a client
// sends CLIENT PAUSE, onPause runs before the command goes on; when a
// client sends CLIENT UNPAUSE, the proxy stops: it closes its listener
// (new dials are refused) and every connection, that one last, instead of
// forwarding it. So the old node of a DUMP/RESTORE batch vanishes between
// the batch and its unpause, as a node that dies or a network that breaks.
type cutProxy struct {
	ln      net.Listener
	backend string
	onPause func()

	wg      sync.WaitGroup
	mu      sync.Mutex
	conns   []net.Conn
	paused  bool
	stopped bool
}

func startCutProxy(t *testing.T, backend string, onPause func()) *cutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &cutProxy{ln: ln, backend: backend, onPause: onPause}
	p.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			b, err := net.Dial("tcp", backend)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			if p.stopped {
				p.mu.Unlock()
				c.Close()
				b.Close()
				return
			}
			p.conns = append(p.conns, c, b)
			p.mu.Unlock()
			p.wg.Go(func() { io.Copy(c, b); c.Close() })
			p.wg.Go(func() { p.forward(c, b) })
		}
	})
	t.Cleanup(func() {
		p.stop(nil)
		p.wg.Wait()
	})
	return p
}

func (p *cutProxy) addr() string { return p.ln.Addr().String() }

// forward copies what client c sends to backend b, watching for CLIENT
// PAUSE and UNPAUSE (each command arrives whole on the loopback).
func (p *cutProxy) forward(c, b net.Conn) {
	defer b.Close()
	buf := make([]byte, 64<<10)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			chunk := bytes.ToUpper(buf[:n])
			if bytes.Contains(chunk, []byte("$7\r\nUNPAUSE\r\n")) {
				p.stop(c)
				return
			}
			if bytes.Contains(chunk, []byte("$5\r\nPAUSE\r\n")) {
				p.mu.Lock()
				first := !p.paused
				p.paused = true
				p.mu.Unlock()
				if first {
					p.onPause()
				}
			}
			if _, err := b.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// stop closes the listener and every connection, last the one given.
func (p *cutProxy) stop(last net.Conn) {
	p.ln.Close()
	p.mu.Lock()
	p.stopped = true
	conns := p.conns
	p.conns = nil
	p.mu.Unlock()
	for _, c := range conns {
		if c != last {
			c.Close()
		}
	}
	if last != nil {
		last.Close()
	}
}

// TestMoveReportsAnOldNodeLostBetweenBatches checks that a Move whose
// old node goes away between two DUMP/RESTORE batches fails with an
// error naming that node, rather than crash the process: the first batch
// finds its keys gone (deleted since the scan), its CLIENT UNPAUSE meets
// a closed connection, and the next batch cannot connect again.
func TestMoveReportsAnOldNodeLostBetweenBatches(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	keys := []string{"gone:1", "gone:2", "gone:3"}
	for _, k := range keys {
		_, err := servers[0].Do("SET", k, "v")
		require.NoError(t, err)
	}
	delErr := make(chan error, 1)
	proxy := startCutProxy(t, servers[0].Addr, func() {
		// The keys go away between the mover's scan and its DUMPs.
		c, err := redis.Dial("tcp", servers[0].Addr)
		if err == nil {
			_, err = c.Do("DEL", keys[0], keys[1], keys[2])
			c.Close()
		}
		delErr <- err
	})
	from := mustParse(t, "redis-ring://"+proxy.addr()+"?names=a")
	to := mustParse(t, ringURL(servers[1:], []string{"b"}, nil))

	_, err := reshard.Move(ctx, reshard.Options{From: from, To: to, Dump: true, Batch: 1, SkipClientCheck: true})
	require.Error(t, err)
	select {
	case err := <-delErr:
		require.NoError(t, err, "deleting the keys at the first pause")
	default:
		t.Fatal("the mover never paused the old node")
	}
	var nerr *shard.NodeError
	require.True(t, errors.As(err, &nerr), "a NodeError: %v", err)
	assert.Equal(t, proxy.addr(), nerr.Node.Addr, "it names the old node: %v", err)
	t.Logf("the error: %v", err)
}
