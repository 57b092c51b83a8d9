//go:build !unix

package pool

import "net"

// peerClosed cannot peek on this platform; the TestOnBorrow PING remains.
func peerClosed(net.Conn) bool { return false }
