package pool

import (
	"net"
	"time"
)

// deadlineSlack is how much earlier than asked a deadline may fire.
// redigo sets a fresh read deadline before every reply it reads and a fresh
// write deadline before every command it queues; in a pipeline those
// deadlines differ by microseconds, and re-arming the runtime's timer each
// time costs more than the I/O itself. Keeping the deadline already set
// when the new one is less than deadlineSlack later saves that work; a read
// or write then times out at most deadlineSlack early, never late.
const deadlineSlack = 5 * time.Millisecond

// coarseConn is a net.Conn whose deadlines are only moved when it matters
// (see deadlineSlack). It is used by one goroutine at a time, as every
// redigo connection is.
type coarseConn struct {
	net.Conn
	read, write time.Time // the deadlines in force
}

// keep reports whether the deadline in force may stand for the new one t.
func keep(current, t time.Time) bool {
	return !t.IsZero() && !current.IsZero() && !t.Before(current) && t.Sub(current) < deadlineSlack
}

func (c *coarseConn) SetReadDeadline(t time.Time) error {
	if keep(c.read, t) {
		return nil
	}
	if err := c.Conn.SetReadDeadline(t); err != nil {
		return err
	}
	c.read = t
	return nil
}

func (c *coarseConn) SetWriteDeadline(t time.Time) error {
	if keep(c.write, t) {
		return nil
	}
	if err := c.Conn.SetWriteDeadline(t); err != nil {
		return err
	}
	c.write = t
	return nil
}

func (c *coarseConn) SetDeadline(t time.Time) error {
	if err := c.Conn.SetDeadline(t); err != nil {
		return err
	}
	c.read, c.write = t, t
	return nil
}
