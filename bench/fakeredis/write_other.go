//go:build !unix

package main

import (
	"net"
	"syscall"
)

// rawConn returns nil: tryWrite does not use it here.
func rawConn(net.Conn) syscall.RawConn { return nil }

// tryWrite writes b, waiting for the socket where the system gives no
// write that does not wait.
func tryWrite(c net.Conn, _ syscall.RawConn, b []byte) (int, error) { return c.Write(b) }
