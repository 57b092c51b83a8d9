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
	// nc arms the deadlines: the redigo connection was dialled without
	// timeouts, and each call here tells nc how long the next reply may
	// take (readTimeout unless the call says otherwise).
	nc          *coarseConn
	readTimeout time.Duration
}

var (
	_ redis.ConnWithTimeout = (*liveConn)(nil)
	_ redis.ConnWithContext = (*liveConn)(nil)
)

// Flush hands redigo's buffer to the connection and sends it. A failure
// closes the connection, as redigo does after its own I/O errors, so that
// the pool drops it.
func (c *liveConn) Flush() error {
	err := c.Conn.Flush()
	if err == nil {
		err = c.nc.flushWrites()
	}
	if err != nil {
		c.nc.Close()
	}
	return err
}

func (c *liveConn) Do(cmd string, args ...any) (any, error) {
	c.nc.readTimeout = c.readTimeout
	return c.Conn.Do(cmd, args...)
}

func (c *liveConn) DoWithTimeout(timeout time.Duration, cmd string, args ...any) (any, error) {
	c.nc.readTimeout = timeout
	return c.Conn.Do(cmd, args...)
}

func (c *liveConn) DoContext(ctx context.Context, cmd string, args ...any) (any, error) {
	c.nc.readTimeout = c.within(ctx)
	return redis.DoContext(c.Conn, ctx, cmd, args...)
}

func (c *liveConn) Receive() (any, error) {
	c.nc.readTimeout = c.readTimeout
	return c.Conn.Receive()
}

func (c *liveConn) ReceiveWithTimeout(timeout time.Duration) (any, error) {
	c.nc.readTimeout = timeout
	return c.Conn.Receive()
}

func (c *liveConn) ReceiveContext(ctx context.Context) (any, error) {
	c.nc.readTimeout = c.within(ctx)
	return redis.ReceiveContext(c.Conn, ctx)
}

// within returns the read timeout cut short by ctx's deadline.
func (c *liveConn) within(ctx context.Context) time.Duration {
	t := c.readTimeout
	if dl, ok := ctx.Deadline(); ok {
		rem := max(time.Until(dl), time.Nanosecond) // a past deadline times out at once
		if t == 0 || rem < t {
			t = rem
		}
	}
	return t
}

// closedByPeer reports whether the server has closed the connection (or
// sent bytes nobody asked for), without blocking and without consuming
// anything.
func (c *liveConn) closedByPeer() bool {
	return c.peek.closed()
}
