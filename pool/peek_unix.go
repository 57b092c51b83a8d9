//go:build unix

package pool

import (
	"crypto/tls"
	"errors"
	"net"
	"syscall"
)

// peeker looks at a socket without blocking and without consuming
// anything. It is built once per connection, so a check allocates nothing.
type peeker struct {
	rc   syscall.RawConn
	tls  bool
	fn   func(fd uintptr) bool // p.peek, bound once
	buf  [1]byte
	n    int
	rerr error
}

func newPeeker(nc net.Conn) *peeker {
	p := &peeker{}
	if tc, ok := nc.(*tls.Conn); ok {
		nc, p.tls = tc.NetConn(), true
	}
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	p.rc = rc
	p.fn = p.peek
	return p
}

func (p *peeker) peek(fd uintptr) bool {
	p.n, _, p.rerr = syscall.Recvfrom(int(fd), p.buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	return true
}

// closed reports whether the server has gone: end of stream or a reset.
// Unsolicited bytes on a plain connection mean the protocol is out of
// step, which is as bad. On TLS they may be a post-handshake record (a
// session ticket) or the server's close_notify before it closed: closed
// then reports false and tlsBytes true, and the caller reads them through
// TLS to tell (liveConn.tlsClosed).
func (p *peeker) closed() (closed, tlsBytes bool) {
	if p == nil {
		return false, false
	}
	if err := p.rc.Read(p.fn); err != nil {
		return true, false
	}
	switch {
	case errors.Is(p.rerr, syscall.EAGAIN), errors.Is(p.rerr, syscall.EWOULDBLOCK), errors.Is(p.rerr, syscall.EINTR):
		return false, false
	case p.rerr != nil:
		return true, false
	case p.n == 0:
		return true, false
	case p.tls:
		return false, true
	default:
		return true, false
	}
}
