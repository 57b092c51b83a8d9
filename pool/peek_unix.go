//go:build unix

package pool

import (
	"crypto/tls"
	"errors"
	"net"
	"syscall"
)

// peerClosed peeks at the socket without blocking: end of stream or a
// reset means the server is gone. Unsolicited bytes on a plain connection
// mean the protocol is out of step, which is as bad; on TLS they may be a
// post-handshake record, so they are allowed there.
func peerClosed(nc net.Conn) bool {
	tlsConn := false
	if tc, ok := nc.(*tls.Conn); ok {
		nc, tlsConn = tc.NetConn(), true
	}
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	var (
		buf  [1]byte
		n    int
		rerr error
	)
	if err := rc.Read(func(fd uintptr) bool {
		n, _, rerr = syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		return true
	}); err != nil {
		return true
	}
	switch {
	case errors.Is(rerr, syscall.EAGAIN), errors.Is(rerr, syscall.EWOULDBLOCK), errors.Is(rerr, syscall.EINTR):
		return false
	case rerr != nil:
		return true
	case n == 0:
		return true
	default:
		return !tlsConn
	}
}
