package pool

import (
	"time"

	"github.com/gomodule/redigo/redis"
)

// ReceiveBy reads the next reply from c, which must be in by deadline: a
// reply already received is returned even after the deadline. For a
// connection of Set.Dial the clock is read only if the socket must be
// waited on. A reply that has
// not come fails with a timeout once the deadline has passed, never
// before, and at most 5 ms after it (deadlines are armed coarsely). It is
// redis.ReceiveWithTimeout with an absolute deadline, for a caller that
// already knows when a reply is due (a command written some time ago, with
// other replies read before it), without a clock read per reply.
// Other connections (a pooled one from Get or GetAbortable, which
// redigo's pool wraps, or one from elsewhere) get ReceiveWithTimeout
// with the time left, one clock read per reply.
func ReceiveBy(c redis.Conn, deadline time.Time) (any, error) {
	if lc, ok := c.(*liveConn); ok {
		lc.nc.startReplyBy(deadline)
		return lc.ReceiveWithTimeout(keepReplyDeadline)
	}
	return redis.ReceiveWithTimeout(c, max(time.Until(deadline), time.Nanosecond))
}
