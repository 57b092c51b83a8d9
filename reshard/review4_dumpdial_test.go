package reshard_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// trapProxy forwards connections to backend until trap is called: then
// it closes the connections it forwards, and holds every new one open
// without a byte in either direction (a node that stopped answering),
// reporting each on held, until release.
type trapProxy struct {
	ln      net.Listener
	backend string
	onSend  func([]byte) // sees what clients send, before it goes on
	held    chan struct{}

	wg       sync.WaitGroup
	mu       sync.Mutex
	conns    []net.Conn
	trapped  bool
	released chan struct{}
	once     sync.Once
}

func startTrapProxy(t *testing.T, backend string, onSend func([]byte)) *trapProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &trapProxy{ln: ln, backend: backend, onSend: onSend, held: make(chan struct{}, 16), released: make(chan struct{})}
	p.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			trapped := p.trapped
			p.conns = append(p.conns, c)
			p.mu.Unlock()
			if trapped {
				select {
				case p.held <- struct{}{}:
				default:
				}
				p.wg.Go(func() { <-p.released; c.Close() })
				continue
			}
			b, err := net.Dial("tcp", backend)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, b)
			p.mu.Unlock()
			p.wg.Go(func() { io.Copy(c, b); c.Close() })
			p.wg.Go(func() {
				defer b.Close()
				buf := make([]byte, 64<<10)
				for {
					n, err := c.Read(buf)
					if n > 0 {
						if p.onSend != nil {
							p.onSend(buf[:n])
						}
						if _, err := b.Write(buf[:n]); err != nil {
							return
						}
					}
					if err != nil {
						return
					}
				}
			})
		}
	})
	t.Cleanup(func() {
		p.release()
		ln.Close()
		p.mu.Lock()
		for _, c := range p.conns {
			c.Close()
		}
		p.mu.Unlock()
		p.wg.Wait()
	})
	return p
}

func (p *trapProxy) addr() string { return p.ln.Addr().String() }

// trap closes the forwarded connections; new ones are held.
func (p *trapProxy) trap() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.trapped {
		return
	}
	p.trapped = true
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// release closes the held connections.
func (p *trapProxy) release() { p.once.Do(func() { close(p.released) }) }

// TestDumpMoveDoesNotPauseWhileDialingTheNewNode checks that the
// DUMP/RESTORE path does not hold the old node's writes paused (CLIENT
// PAUSE WRITE) while it connects to a new node that does not answer: the
// application's writes to the old node would wait for a dial and
// handshake timeout. The new node stops answering once the mover has
// begun scanning; while the mover's dial hangs, a write to the old node
// must go through.
func TestDumpMoveDoesNotPauseWhileDialingTheNewNode(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	for _, k := range []string{"a", "b", "c"} {
		_, err := servers[0].Do("SET", k, "v")
		require.NoError(t, err)
	}
	dst := startTrapProxy(t, servers[1].Addr, nil)
	src := startTrapProxy(t, servers[0].Addr, func(b []byte) {
		if bytes.Contains(bytes.ToUpper(b), []byte("$4\r\nSCAN\r\n")) {
			dst.trap() // the mover has armed and begins to move
		}
	})
	from := mustParse(t, "redis-ring://"+src.addr()+"?names=a")
	to := mustParse(t, "redis-ring://"+dst.addr()+"?names=b&read_timeout=20s&dial_timeout=20s")

	done := make(chan error, 1)
	go func() {
		_, err := reshard.Move(ctx, reshard.Options{From: from, To: to, Dump: true, SkipClientCheck: true})
		done <- err
	}()
	select {
	case <-dst.held:
	case err := <-done:
		t.Fatalf("the mover ended before it dialled the new node again: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("the mover did not dial the new node within 60s")
	}
	// The mover is connecting to the new node now. A write to the old one:
	conn, err := redis.Dial("tcp", servers[0].Addr, redis.DialReadTimeout(5*time.Second))
	require.NoError(t, err)
	_, werr := conn.Do("SET", "app", "write")
	conn.Close()
	dst.release()
	err = <-done
	assert.NoError(t, werr, "a write to the old node while the mover connects to the new one")
	var nerr *shard.NodeError
	require.True(t, errors.As(err, &nerr), "a NodeError: %v", err)
	assert.Equal(t, dst.addr(), nerr.Node.Addr, "it names the new node: %v", err)
}
