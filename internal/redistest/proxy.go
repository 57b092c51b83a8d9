package redistest

import (
	"net"
	"sync"
	"testing"
	"time"
)

// Proxy is a loopback TCP proxy to a backend (a real server), for
// network-fault tests: it forwards bytes both ways as they come, and lets
// the test watch, hold or stop on what a client sends (ProxyOptions.OnSend),
// pass the backend's close on late (ProxyOptions.CloseDelay), and cut
// every connection while holding new ones unanswered (CutAndHold).
//
// A client's close reaches the backend as a half-close, and what the
// backend sends is read to its end even once the client has gone, so a
// command the proxy has forwarded is never lost to a reset.
type Proxy struct {
	// Addr is the host:port it listens on (127.0.0.1).
	Addr string

	backend string
	opts    ProxyOptions
	ln      net.Listener
	held    chan struct{}

	wg       sync.WaitGroup
	mu       sync.Mutex
	conns    map[net.Conn]bool
	holding  bool
	closed   bool
	released chan struct{}
	release  sync.Once
	stopped  chan struct{} // closed by Close
	stop     sync.Once
}

// ProxyOptions says what a Proxy does besides forwarding bytes.
type ProxyOptions struct {
	// OnSend, when set, sees each chunk a client sends (on the loopback
	// a command arrives whole) before it is forwarded. It runs on the
	// connection's goroutine: blocking in it holds the chunk and all
	// that follows on that connection (unblock it before the proxy
	// closes, as a t.Cleanup registered after StartProxy does). Returning
	// false drops the chunk and closes the proxy, as Close, with this
	// connection last: a node that vanishes when a client sends a given
	// command.
	OnSend func(chunk []byte) (forward bool)
	// OnReply, when set, sees each chunk the backend sends instead of
	// the client, and passes it on itself with forward: whole, in
	// pieces, some of it later (a server or network that delivers a
	// reply's bytes late), or not at all. It runs on the connection's
	// goroutine: blocking in it holds what the backend sends next on
	// that connection (unblock it before the proxy closes, as a
	// t.Cleanup registered after StartProxy does). forward fails once
	// the client has gone.
	OnReply func(chunk []byte, forward func([]byte) error)
	// CloseDelay is how much later than the backend's close the client
	// sees its own: for that long, after the last reply, the connection
	// looks alive.
	CloseDelay time.Duration
}

// StartProxy starts a Proxy to backend; it closes when the test ends.
func StartProxy(tb testing.TB, backend string, opts ProxyOptions) *Proxy {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("proxy: listen: %v", err)
	}
	p := &Proxy{Addr: ln.Addr().String(), backend: backend, opts: opts, ln: ln,
		held: make(chan struct{}, 16), conns: map[net.Conn]bool{}, released: make(chan struct{}), stopped: make(chan struct{})}
	p.wg.Add(1)
	go p.accept()
	tb.Cleanup(p.Close)
	return p
}

// CutAndHold closes every connection the proxy forwards; from then on it
// accepts new ones but holds them open without a byte in either
// direction (a node that stopped answering), reporting each on Held,
// until Release.
func (p *Proxy) CutAndHold() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.holding {
		return
	}
	p.holding = true
	for c := range p.conns {
		c.Close()
		delete(p.conns, c)
	}
}

// Held receives a value for each connection CutAndHold made the proxy
// hold (up to 16 not yet received; more are held all the same).
func (p *Proxy) Held() <-chan struct{} { return p.held }

// Release closes the connections CutAndHold held, and those it holds
// from then on.
func (p *Proxy) Release() { p.release.Do(func() { close(p.released) }) }

// Shutdown stops listening and waits until every connection the proxy
// forwards has ended by itself (closed by the client and the backend,
// what was on its way delivered), closing none of them; the connections
// CutAndHold held are released. An OnSend that blocks must be unblocked
// first.
func (p *Proxy) Shutdown() {
	p.ln.Close()
	p.Release()
	p.wg.Wait()
}

// Close stops listening, closes every connection and waits for the
// proxy's goroutines. It may be called more than once.
func (p *Proxy) Close() {
	p.closeLast(nil)
	p.Release()
	p.wg.Wait()
}

// closeLast stops listening and closes every connection, last the one
// given (nil: none).
func (p *Proxy) closeLast(last net.Conn) {
	p.stop.Do(func() { close(p.stopped) })
	p.ln.Close()
	p.mu.Lock()
	p.closed = true
	conns := p.conns
	p.conns = map[net.Conn]bool{}
	p.mu.Unlock()
	for c := range conns {
		if c != last {
			c.Close()
		}
	}
	if last != nil {
		last.Close()
	}
}

// track adds conns to those Close closes, unless the proxy is closed.
func (p *Proxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	for _, c := range conns {
		p.conns[c] = true
	}
	return true
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		holding := p.holding
		p.mu.Unlock()
		if holding {
			if !p.track(c) {
				c.Close()
				return
			}
			select {
			case p.held <- struct{}{}:
			default:
			}
			p.wg.Go(func() { <-p.released; c.Close() })
			continue
		}
		b, err := net.Dial("tcp", p.backend)
		if err != nil {
			c.Close()
			continue
		}
		if !p.track(c, b) {
			c.Close()
			b.Close()
			return
		}
		p.wg.Go(func() { p.toClient(c, b) })
		p.wg.Go(func() { p.toBackend(c, b) })
	}
}

// toClient copies what backend b sends to client c, to its end (the
// client may have gone: b is read all the same), then closes b, and c
// CloseDelay later.
func (p *Proxy) toClient(c, b net.Conn) {
	buf := make([]byte, 64<<10)
	for {
		n, err := b.Read(buf)
		if n > 0 {
			if p.opts.OnReply != nil {
				p.opts.OnReply(buf[:n], func(b []byte) error { _, err := c.Write(b); return err })
			} else {
				_, _ = c.Write(buf[:n])
			}
		}
		if err != nil {
			break
		}
	}
	b.Close()
	if p.opts.CloseDelay > 0 {
		select {
		case <-time.After(p.opts.CloseDelay):
		case <-p.stopped: // no one waits for the late close
		}
	}
	c.Close()
	p.mu.Lock()
	delete(p.conns, b)
	delete(p.conns, c)
	p.mu.Unlock()
}

// toBackend copies what client c sends to backend b, through OnSend; the
// client's close half-closes b.
func (p *Proxy) toBackend(c, b net.Conn) {
	defer func() {
		if tc, ok := b.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		} else {
			b.Close()
		}
	}()
	buf := make([]byte, 64<<10)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			chunk := buf[:n]
			if p.opts.OnSend != nil && !p.opts.OnSend(chunk) {
				p.closeLast(c)
				return
			}
			if _, err := b.Write(chunk); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
