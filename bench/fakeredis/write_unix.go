//go:build unix

package main

import (
	"errors"
	"net"
	"syscall"
)

// rawConn returns c's raw connection, nil where it has none.
func rawConn(c net.Conn) syscall.RawConn {
	if sc, ok := c.(syscall.Conn); ok {
		if rc, err := sc.SyscallConn(); err == nil {
			return rc
		}
	}
	return nil
}

// tryWrite writes as much of b as the socket takes without waiting and
// returns how much that was; without rc it writes all of b to c.
func tryWrite(c net.Conn, rc syscall.RawConn, b []byte) (int, error) {
	if rc == nil {
		return c.Write(b)
	}
	written := 0
	var werr error
	err := rc.Write(func(fd uintptr) bool {
		for written < len(b) {
			n, err := syscall.Write(int(fd), b[written:])
			if n > 0 {
				written += n
			}
			switch {
			case errors.Is(err, syscall.EINTR):
				continue
			case errors.Is(err, syscall.EAGAIN):
				return true // full: the rest waits for the draining goroutine
			case err != nil:
				werr = err
				return true
			case n == 0:
				return true
			}
		}
		return true
	})
	if err == nil {
		err = werr
	}
	return written, err
}
