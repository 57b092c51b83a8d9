//go:build !unix

package pool

import "net"

// peeker cannot look at sockets on this platform; the TestOnBorrow PING
// remains.
type peeker struct{}

func newPeeker(net.Conn) *peeker { return nil }

func (p *peeker) closed() (closed, tlsBytes bool) { return false, false }
