package pool

import (
	"context"
	"time"

	"github.com/gomodule/redigo/redis"
)

// liveConn is a redigo connection that remembers its network connection,
// so that the pool can tell, before handing it out, whether the server
// has already closed it (a killed or restarted server). Writing a command
// to such a connection would leave its outcome unknown; noticing first
// lets the caller dial afresh instead.
type liveConn struct {
	redis.Conn
	peek *peeker // nil where the socket cannot be peeked at
}

var (
	_ redis.ConnWithTimeout = (*liveConn)(nil)
	_ redis.ConnWithContext = (*liveConn)(nil)
)

func (c *liveConn) DoWithTimeout(timeout time.Duration, cmd string, args ...any) (any, error) {
	return redis.DoWithTimeout(c.Conn, timeout, cmd, args...)
}

func (c *liveConn) ReceiveWithTimeout(timeout time.Duration) (any, error) {
	return redis.ReceiveWithTimeout(c.Conn, timeout)
}

func (c *liveConn) DoContext(ctx context.Context, cmd string, args ...any) (any, error) {
	return redis.DoContext(c.Conn, ctx, cmd, args...)
}

func (c *liveConn) ReceiveContext(ctx context.Context) (any, error) {
	return redis.ReceiveContext(c.Conn, ctx)
}

// closedByPeer reports whether the server has closed the connection (or
// sent bytes nobody asked for), without blocking and without consuming
// anything.
func (c *liveConn) closedByPeer() bool {
	return c.peek.closed()
}
