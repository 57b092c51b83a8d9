package pool

import (
	"math"
	"net"
	"time"
)

// deadlineSlack is how much later than asked a deadline may fire.
// Successive reads and writes of a pipeline ask for deadlines that differ
// by microseconds, and re-arming the runtime's timer each time costs more
// than the I/O itself. A deadline is therefore armed a little later than
// asked (by deadlineSlack, or by half of the time it allows when that is
// less), and kept for every later one it is not earlier than, by at most
// deadlineSlack (and, for a timeout, by at most half of it): a read or
// write times out at most deadlineSlack late, never early. A caller who
// gives a deadline (ReceiveBy, a context's) never sees a timeout before
// it has passed.
const deadlineSlack = 5 * time.Millisecond

// coarseConn is a net.Conn whose deadlines are only moved when it matters
// (see deadlineSlack). Reads and writes may come from two goroutines (one
// each); each side keeps its own deadline.
//
// The liveConn around it reads and writes through armedRead and
// armedWrite, which arm the deadline right before a system call. A read
// deadline bounds a whole reply, not each read: the liveConn calls
// startReply before it parses a reply (Do: before all the replies it
// waits for), and the first system call read after that fixes the
// deadline at readTimeout from then; every later read of that reply keeps
// it, so a server that trickles a reply a byte at a time still times out
// after readTimeout. A pipeline of a hundred replies that arrive in one
// segment costs one clock read, not a hundred.
type coarseConn struct {
	net.Conn
	read, write time.Time // the deadlines in force

	// Timeouts for armedRead and armedWrite; 0 means none. readTimeout
	// and readBy belong to the reading goroutine, writeTimeout is set
	// once, after the connection's setup.
	readTimeout, writeTimeout time.Duration
	// readBy is the deadline of the reply being read; zero until its
	// first system call read.
	readBy time.Time
}

// startReply starts the wait for a reply, bounded by timeout (0: none;
// negative: a deadline already past, as redigo's now+timeout is, so that
// only a reply already received is read; keepReplyDeadline: the one
// startReplyBy set).
func (c *coarseConn) startReply(timeout time.Duration) {
	switch {
	case timeout == keepReplyDeadline:
		return
	case timeout < 0:
		c.startReplyBy(pastDeadline)
		return
	}
	c.readTimeout = timeout
	c.readBy = time.Time{}
}

// pastDeadline is a read deadline that has always passed.
var pastDeadline = time.Unix(1, 0)

// keepReplyDeadline is the timeout that keeps startReplyBy's deadline;
// no caller passes it (any other negative timeout has passed already).
const keepReplyDeadline time.Duration = math.MinInt64

// startReplyBy starts the wait for a reply that must be in by t.
func (c *coarseConn) startReplyBy(t time.Time) {
	c.readTimeout = 0
	c.readBy = t
}

// armedRead reads from the socket, its deadline armed for the reply being
// read (see startReply).
func (c *coarseConn) armedRead(p []byte) (int, error) {
	var now time.Time
	if c.readTimeout > 0 && c.readBy.IsZero() {
		now = time.Now()
		c.readBy = now.Add(c.readTimeout)
	}
	if err := c.armRead(c.readBy, now); err != nil {
		return 0, err
	}
	return c.Conn.Read(p)
}

// armedWrite writes to the socket, its deadline armed from writeTimeout.
func (c *coarseConn) armedWrite(p []byte) (int, error) {
	if c.writeTimeout > 0 {
		now := time.Now()
		if err := c.armWrite(now.Add(c.writeTimeout), now); err != nil {
			return 0, err
		}
	}
	return c.Conn.Write(p)
}

// armRead and armWrite set a deadline on behalf of the liveConn. now is
// the time t was computed from, or zero for a deadline given as such
// (startReplyBy, or none).
func (c *coarseConn) armRead(t, now time.Time) error {
	if keep(c.read, t, now) {
		return nil
	}
	at := padded(t, now)
	if err := c.Conn.SetReadDeadline(at); err != nil {
		return err
	}
	c.read = at
	return nil
}

func (c *coarseConn) armWrite(t, now time.Time) error {
	if keep(c.write, t, now) {
		return nil
	}
	at := padded(t, now)
	if err := c.Conn.SetWriteDeadline(at); err != nil {
		return err
	}
	c.write = at
	return nil
}

// keep reports whether the deadline in force may stand for the new one
// t: it is not earlier than t, and later by at most deadlineSlack and, for
// a t computed at now (not zero), by at most half of the time t allows.
func keep(current, t, now time.Time) bool {
	if t.IsZero() || current.IsZero() {
		return t.IsZero() && current.IsZero()
	}
	late := current.Sub(t)
	if late < 0 || late > deadlineSlack {
		return false
	}
	return now.IsZero() || late <= t.Sub(now)/2
}

// padded is the deadline armed for t: t moved later by deadlineSlack, or
// by half of the time t allows when that is less, so that the deadlines
// asked for next, a little later each, keep it (keep). A deadline that
// has passed, or none, is armed as it is.
func padded(t, now time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	if now.IsZero() {
		now = time.Now() // only when a deadline is armed anyway
	}
	pad := min(deadlineSlack, t.Sub(now)/2)
	if pad <= 0 {
		return t
	}
	return t.Add(pad)
}

func (c *coarseConn) SetReadDeadline(t time.Time) error {
	return c.armRead(t, time.Now())
}

func (c *coarseConn) SetWriteDeadline(t time.Time) error {
	return c.armWrite(t, time.Now())
}

func (c *coarseConn) SetDeadline(t time.Time) error {
	if err := c.Conn.SetDeadline(t); err != nil {
		return err
	}
	c.read, c.write = t, t
	return nil
}
