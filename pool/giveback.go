package pool

import (
	"errors"
	"runtime"
	"strings"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/shard/command"
)

// redigo's pool gives a connection back by reading every reply still
// pending on it (Do("")), for as long as ReadTimeout allows, before it
// keeps it. Two kinds of reply may never come, or only when the server
// chooses:
//
//   - that of a blocking command (BLPOP, XREAD BLOCK, WAIT, ... outside
//     MULTI) whose caller gave up on it: the server answers it when an
//     element arrives, which the drain would then take and throw away,
//     or never; the return waited up to ReadTimeout, forever without one.
//     Sent after MULTI, the server only queues it if it accepted the
//     MULTI: one it refused (an ACL user without MULTI, say) leaves it
//     blocking. Unless the MULTI's +OK was read, it counts as blocking;
//   - any reply after CLIENT REPLY OFF or SKIP, or REPLCONF (whose ACK
//     and GETACK forms the server never answers): the server sends
//     none, and the return waited ReadTimeout for nothing.
//
// The connection would not be handed on in either state (the first
// fails its read, the second is marked changed, connstate.go); waiting
// gains nothing. So the return sends what was queued, as redigo's does,
// and closes the connection instead of reading: the server forgets a
// blocked command of a closed connection, and Close returns at once.
// Only the pool's return does so: a caller's own Do("") reads the
// replies it asked for, as redigo's does.
//
// A connection that subscribed since it was borrowed is read further
// first: redigo's return sends UNSUBSCRIBE, PUNSUBSCRIBE and ECHO, flushes
// them and reads up to the ECHO's reply, which the server sends only
// after the replies pending before it. The Flush gives up in the same
// way (liveConn.Flush); the read after it then fails at once, so such a
// Close reports errGivenBack.

// errGivenBack is the failure of a connection closed by the pool's return
// because a reply pending on it may never come.
var errGivenBack = errors.New("shardis: connection closed when given back: a reply pending on it may never come (blocking command or CLIENT REPLY OFF|SKIP)")

// noteBlocking records, for a command being sent, whether it may block on
// the server (see unanswered). Inside a MULTI whose +OK was read the
// server only queues it; inside one whose reply is unread it may block
// too (the server refused the MULTI: an ACL user without it, a wrong
// argument count), which only that reply tells (unsureAt); after a
// refused MULTI, whose reply was read, it blocks as outside MULTI. It
// costs a byte comparison for most commands: it runs for every command
// sent.
func (c *liveConn) noteBlocking(cmd string, args []any) {
	c.sent++
	if len(cmd) == 0 {
		return
	}
	inMulti := c.multi.Load()
	if inMulti && c.multiOK.Load() == c.multiAt.Load() { // queued
		return
	}
	switch cmd[0] | 0x20 {
	case 'b', 'x', 'w':
		if !blocks(cmd, args) {
			return
		}
		if m := c.multiAt.Load(); inMulti && c.sent-c.pending.Load() < m {
			c.unsureAt, c.unsureMulti = c.sent, m // MULTI's reply unread
		} else {
			c.blockedAt = c.sent
		}
	case 'c':
		if len(cmd) == 6 && strings.EqualFold(cmd, "client") && len(args) > 1 &&
			argIs(args[0], "reply") && !argIs(args[1], "on") {
			c.silenced = true
		}
	case 'r':
		if len(cmd) == 8 && strings.EqualFold(cmd, "replconf") {
			c.silenced = true // ACK and GETACK get no reply
		}
	}
}

// answer notes a reply read that answers a command (answered): the +OK
// of the MULTI that opened the transaction confirms it (multiOK), and a
// refusal of that MULTI, of the EXEC or DISCARD taken for the
// transaction's end, or of the UNWATCH taken for the watch's end, tells
// that the server's transaction state is not what noteTx assumed
// (refusedTx).
//
// Only the last of each is looked at: the replies of a pipeline are
// often read after all its commands were sent. That is enough: a MULTI
// that the server accepts and an EXEC or DISCARD after it that it
// accepts leave neither transaction nor watch, whatever was refused
// before them, as does an UNWATCH that it accepts outside a
// transaction; a MULTI sent while an earlier refusal left a
// transaction open is refused as nested, which its reply tells.
func (c *liveConn) answer(r any) {
	n := c.answered.Add(1)
	switch n {
	case c.multiAt.Load():
		switch r := r.(type) {
		case string:
			// After a command of the SUBSCRIBE family, whose
			// replies outnumber it, the reply counted as the
			// MULTI's may be an earlier command's +OK: the MULTI
			// stays unconfirmed (its refusal still marks the
			// connection changed, next).
			if r == "OK" && !c.subscribed.Load() {
				c.multiOK.Store(n)
			}
		case redis.Error:
			c.refusedTx()
		}
	case c.endAt.Load():
		// EXECABORT ends the transaction (and the watch) as EXEC does.
		if e, ok := r.(redis.Error); ok && !strings.HasPrefix(string(e), "EXECABORT") {
			c.refusedTx()
		}
	case c.unwatchAt.Load():
		if _, ok := r.(redis.Error); ok {
			c.refusedTx()
		}
	}
}

// blocks reports whether the command may block on the server: one flagged
// blocking (BLPOP, BLMOVE, BZPOPMIN, ...), XREAD and XREADGROUP with a
// BLOCK option, WAIT and WAITAOF.
func blocks(cmd string, args []any) bool {
	if strings.EqualFold(cmd, "wait") || strings.EqualFold(cmd, "waitaof") {
		return true
	}
	info := command.Lookup(cmd)
	if info == nil || info.Flags&command.Blocking == 0 {
		return false
	}
	if info.Name != "xread" && info.Name != "xreadgroup" {
		return true
	}
	for _, a := range args {
		switch {
		case argIs(a, "streams"):
			return false
		case argIs(a, "block"):
			return true
		}
	}
	return false
}

// argIs reports whether the argument a, as it is sent, is the word w,
// in any case: a Stringer's REPLY is the server's REPLY (command.ArgText).
func argIs(a any, w string) bool {
	return strings.EqualFold(command.ArgText(a), w)
}

// unanswered reports whether a reply pending on c may never come, or
// only when the server chooses: a blocking command's is among the
// pending ones (the replies pending are those of the last commands
// sent), one sent inside a MULTI whose +OK has not been read is (the
// server may have refused the MULTI, and then runs it at once), or
// replies were silenced (CLIENT REPLY OFF or SKIP, REPLCONF).
func (c *liveConn) unanswered() bool {
	pending := c.pending.Load()
	if pending <= 0 {
		return false
	}
	read := c.sent - pending
	return c.silenced || c.blockedAt > read ||
		c.unsureAt > read && c.multiOK.Load() != c.unsureMulti
}

// giveUp is the pool's return of a connection whose pending replies may
// never come (unanswered): what was queued is sent, as the return would
// send it, and the connection is closed instead of read. The return's
// Do("") then answers nil: the caller gave the connection back, which
// it did; the failure recorded makes the pool close the connection
// rather than keep it.
func (c *liveConn) giveUp() {
	if len(c.wbuf) > 0 {
		c.write() // a failure closes the connection anyway
	}
	c.fail(errGivenBack)
}

// Names of redigo's pooled connection's methods (pool.go), as the
// runtime reports them.
const (
	redigoActiveClose = "github.com/gomodule/redigo/redis.(*activeConn).Close"
	redigoActiveDo    = "github.com/gomodule/redigo/redis.(*activeConn).Do"
	redigoActiveFlush = "github.com/gomodule/redigo/redis.(*activeConn).Flush"
)

// returning reports whether the call of liveConn.Do or liveConn.Flush
// that called it comes from redigo's pool giving the connection back:
// activeConn.Close, or the Do("") or Flush that the Close of a Pool's
// lender (Set.Pool) makes on the Set's own connection. Nothing else
// tells it from a caller's Do("") or Flush, which must keep reading, and
// renames nothing. It runs only for a connection given back with a reply
// pending that may never come (unanswered), or under an old name
// (names.go).
//
//go:noinline
func returning() bool {
	var pcs [8]uintptr
	n := runtime.Callers(3, pcs[:]) // past Callers, returning and liveConn.Do or Flush
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		switch f.Function {
		case redigoActiveClose:
			return true
		case redigoActiveDo, redigoActiveFlush:
			// the lender's connection passing the return's call on
		default:
			return false
		}
		if !more {
			return false
		}
	}
}
