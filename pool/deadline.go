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
// (see deadlineSlack). Reads and writes may come from two goroutines (one
// each); each side keeps its own deadline.
//
// The liveConn around it reads and writes through armedRead and
// armedWrite, which arm the deadline right before each system call:
// readTimeout (set by the liveConn for each reply it waits for) or
// writeTimeout. A pipeline of a hundred replies that arrive in one
// segment then costs one clock read, not a hundred, and every wait on the
// socket still gets its full timeout.
type coarseConn struct {
	net.Conn
	read, write time.Time // the deadlines in force

	// Timeouts for armedRead and armedWrite; 0 means none. readTimeout
	// belongs to the reading goroutine, writeTimeout is set once, after
	// the connection's setup.
	readTimeout, writeTimeout time.Duration
}

// armedRead reads from the socket with the managed read deadline.
func (c *coarseConn) armedRead(p []byte) (int, error) {
	var t time.Time
	if c.readTimeout > 0 {
		t = time.Now().Add(c.readTimeout)
	}
	if err := c.armRead(t); err != nil {
		return 0, err
	}
	return c.Conn.Read(p)
}

// armedWrite writes to the socket with the managed write deadline.
func (c *coarseConn) armedWrite(p []byte) (int, error) {
	if c.writeTimeout > 0 {
		if err := c.armWrite(time.Now().Add(c.writeTimeout)); err != nil {
			return 0, err
		}
	}
	return c.Conn.Write(p)
}

// armRead and armWrite set a deadline on behalf of the liveConn.
func (c *coarseConn) armRead(t time.Time) error {
	if keep(c.read, t) {
		return nil
	}
	if err := c.Conn.SetReadDeadline(t); err != nil {
		return err
	}
	c.read = t
	return nil
}

func (c *coarseConn) armWrite(t time.Time) error {
	if keep(c.write, t) {
		return nil
	}
	if err := c.Conn.SetWriteDeadline(t); err != nil {
		return err
	}
	c.write = t
	return nil
}

// keep reports whether the deadline in force may stand for the new one t.
func keep(current, t time.Time) bool {
	if t.IsZero() && current.IsZero() {
		return true
	}
	return !t.IsZero() && !current.IsZero() && !t.Before(current) && t.Sub(current) < deadlineSlack
}

func (c *coarseConn) SetReadDeadline(t time.Time) error {
	return c.armRead(t)
}

func (c *coarseConn) SetWriteDeadline(t time.Time) error {
	return c.armWrite(t)
}

func (c *coarseConn) SetDeadline(t time.Time) error {
	if err := c.Conn.SetDeadline(t); err != nil {
		return err
	}
	c.read, c.write = t, t
	return nil
}
