package shard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/errtext"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard/command"
)

// trackedConn is a pooled connection lent to code outside the executor:
// a ForEachShard callback, a transaction, a Conn's transaction. It notes
// every command sent on it; release gives it back to the pool only in the
// state a fresh connection has. A transaction left open is undone
// (DISCARD, UNWATCH); any other change of state (SELECT, CLIENT SETNAME,
// SUBSCRIBE, MONITOR, ...) gets the connection closed instead.
type trackedConn struct {
	conn  redis.Conn
	abort func() // closes the socket; the pool never hands it out again
	// closed reports, without a round trip, whether the server has
	// closed the connection or it failed (pool.Set.GetProbed).
	closed func() bool

	mu       sync.Mutex
	dirty    bool // a command changed the connection's state
	watching bool // WATCH without EXEC, DISCARD or UNWATCH
	multi    bool // MULTI without EXEC or DISCARD, not refused by the server as far as read
	asking   bool // ASKING, not yet consumed by a command after it
	released bool
	// sent and read count the commands sent and the replies read;
	// blockedAt is the number (in sent) of the last command sent that
	// may block on the server (BLPOP, XREAD BLOCK, WAIT, ...), inside
	// MULTI too: the server only queues it there, unless it refused the
	// MULTI (NOPERM, say), which only MULTI's reply, perhaps unread,
	// tells. While blockedAt > read, a reply the server may hold back for
	// as long as it likes may be unread: release closes the connection
	// rather than wait for it.
	sent, read, blockedAt int64
	// writeAt is the number (in sent) of the last command sent that
	// may write: while writeAt > read, a read that Close cuts off may
	// leave a write that ran (its error is then a *cutWriteError).
	writeAt int64
	// blockWait is how long the blocking commands whose replies are
	// unread and which the server may run at once asked it to block,
	// together: those sent outside MULTI, or after a MULTI the server
	// refused or whose reply was read with others (it may have
	// refused it); blockForever says one of them asked to block
	// without limit. A wait for their replies is bounded by the read
	// timeout plus blockWait and the waits in txUnread (replyWait), as
	// Client.Do's is, not by the read timeout alone. They are reset
	// once every reply was read.
	blockWait    time.Duration
	blockForever bool
	// multiAt is the number (in sent) of the MULTI that began the
	// transaction multi notes; multiOK says its reply was read and OK:
	// the server only queues the commands after it. txUnread holds the
	// MULTIs whose reply is unread, oldest first, each with the
	// blocking commands sent after it in its transaction: the server
	// may have refused the MULTI (NOPERM, a wrong number of arguments)
	// and then runs them at once, so they count until its reply says.
	multiAt  int64
	multiOK  bool
	txUnread []txBlocks
	// readTimeout is the pool's read timeout.
	readTimeout time.Duration
	// protoErr: a reply was a protocol error, after which the server
	// closes the connection without running what was written after the
	// command: nothing more is written on it (usable), and what was is
	// known not to have run.
	protoErr bool
	// protoReply is that protocol error reply (the first), which says
	// why (protocolRefusal).
	protoReply redis.Error
	// closing: the server said that it closes the connection after the
	// reply read (a demoted master's UNBLOCKED, unblockedByDemotion),
	// which it does at once, though the socket may not show it yet
	// (closedByServer).
	closing bool
	// commands, when set, counts each command sent on the connection in
	// its node's NodeStats.Commands (a ForEachShard callback's); nil
	// where the lender counts what it sends itself (the transactions).
	commands *atomic.Int64
	// hooks, when set, reports the commands sent on the connection to
	// the client's hooks (a ForEachShard callback's; hooks_lent.go).
	hooks *lentHooks
	// life is the client's: Close ends it, and with it the wait for the
	// reply of a blocking command (whileBlocking).
	life context.Context
}

var (
	_ redis.Conn            = (*trackedConn)(nil)
	_ redis.ConnWithContext = (*trackedConn)(nil)
	_ redis.ConnWithTimeout = (*trackedConn)(nil)
)

// borrowTracked borrows a connection to addr (a master's: no READONLY)
// wrapped in a trackedConn.
func (c *Client) borrowTracked(ctx context.Context, addr string) (*trackedConn, error) {
	conn, abort, closed, err := c.pools.GetProbed(ctx, addr, false)
	if err != nil {
		if errors.Is(err, pool.ErrClosed) { // Close came first: as conn says
			err = errtext.Errorf("%w (%w)", ErrClosed, err)
		}
		return nil, err
	}
	return &trackedConn{conn: conn, abort: abort, closed: closed, life: c.life, readTimeout: c.readTimeout}, nil
}

// note records what the command name does to the connection, and that
// it is sent; it reports whether the command may block on the server.
func (tc *trackedConn) note(name string, args []any) (blocking bool) {
	info := command.Lookup(name)
	eff := command.EffectOf(info, name, args)
	if tc.commands != nil {
		tc.commands.Add(1)
	}
	tc.mu.Lock()
	defer tc.mu.Unlock()
	tc.sent++
	if mayWrite(info.Resolve(args)) {
		tc.writeAt = tc.sent
	}
	if d, ok := blockFor(&call{name: name, args: args, info: info}); ok {
		tc.blockedAt = tc.sent // inside a MULTI that the server may have refused too
		blocking = true
		switch n := len(tc.txUnread); {
		case !tc.multi:
			tc.blockForever = tc.blockForever || d == 0
			tc.blockWait += d
		case n > 0 && tc.txUnread[n-1].at == tc.multiAt:
			// Queued unless the server refused the MULTI, which its
			// reply, unread, tells.
			tc.txUnread[n-1].add(d)
		case !tc.multiOK:
			// MULTI's reply was read among others, unseen: it may
			// have been refused.
			tc.blockForever = tc.blockForever || d == 0
			tc.blockWait += d
		}
		// Otherwise the server accepted the MULTI: it only queues it.
	}
	// ASKING lasts for the one command after it (a transaction at a
	// slot's importing node sends it before each command): only an
	// ASKING that nothing followed leaves the connection changed.
	asking := info != nil && info.Name == "asking"
	tc.asking = asking
	if eff == command.Stateless || asking {
		return
	}
	if eff != command.Transaction {
		tc.dirty = true
		return
	}
	switch info.Name {
	case "watch":
		tc.watching = true
	case "multi":
		if !tc.multi { // inside one, the server refuses it and stays there
			tc.multi, tc.multiAt, tc.multiOK = true, tc.sent, false
			tc.txUnread = append(tc.txUnread, txBlocks{at: tc.sent})
		}
	case "exec", "discard":
		if tc.multi { // without MULTI the server refuses them and WATCH stays
			tc.watching, tc.multi = false, false
		}
	case "unwatch":
		if !tc.multi {
			tc.watching = false
		}
	}
	return blocking
}

// txBlocks is a MULTI whose reply is unread (number at in sent), with
// how long the blocking commands sent after it in its transaction asked
// the server to block, together (forever: one without limit).
type txBlocks struct {
	at      int64
	wait    time.Duration
	forever bool
}

// add counts a blocking command that asked to block for d (0: without
// limit).
func (b *txBlocks) add(d time.Duration) {
	b.forever = b.forever || d == 0
	b.wait += d
}

// replyRead records that the next reply was read, with err its error
// reply (nil for any other reply).
func (tc *trackedConn) replyRead(err error) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	tc.read = min(tc.read+1, tc.sent)
	tc.multiReplied(tc.read, err)
	if tc.read >= tc.sent {
		tc.allRead()
	}
}

// doDone records that a Do read every reply pending, err its error: the
// Do's own reply's when no earlier one was pending (Do returns the first
// error reply among those it read).
func (tc *trackedConn) doDone(err error) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if tc.read == tc.sent-1 {
		tc.multiReplied(tc.sent, err)
	}
	tc.read = tc.sent
	tc.allRead()
}

// multiReplied notes that reply number n was read, with err its error
// reply: when it is a MULTI's (txUnread), the blocking commands sent
// after it block on the server if it refused the MULTI, and are only
// queued otherwise. tc.mu is held.
func (tc *trackedConn) multiReplied(n int64, err error) {
	for len(tc.txUnread) > 0 && tc.txUnread[0].at < n {
		tc.txUnread = tc.txUnread[1:] // read unseen (cannot happen)
	}
	if len(tc.txUnread) == 0 || tc.txUnread[0].at != n {
		return
	}
	b := tc.txUnread[0]
	tc.txUnread = tc.txUnread[1:]
	current := tc.multi && tc.multiAt == n
	if err == nil {
		tc.multiOK = tc.multiOK || current
		return
	}
	if !isRedisError(err) {
		return // the connection failed: no reply says
	}
	// Refused: the connection is in no transaction, and what was sent
	// after the MULTI runs at once.
	tc.blockForever = tc.blockForever || b.forever
	tc.blockWait += b.wait
	if current {
		tc.multi = false
	}
}

// allRead resets what is noted of the replies pending once every one
// was read. tc.mu is held.
func (tc *trackedConn) allRead() {
	tc.blockWait, tc.blockForever = 0, false
	tc.txUnread = nil
}

// replyWait returns how long to wait for the replies pending: the read
// timeout plus the time the blocking commands among them asked the
// server to block (0: without limit), and whether one of them blocks
// (false: the connection's own read timeout applies).
func (tc *trackedConn) replyWait() (time.Duration, bool) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if tc.blockedAt <= tc.read {
		return 0, false
	}
	wait, forever := tc.blockWait, tc.blockForever
	for _, b := range tc.txUnread {
		wait, forever = wait+b.wait, forever || b.forever
	}
	if forever {
		return 0, true
	}
	return tc.readTimeout + wait, true
}

// writeUnread reports whether a command that may write has its reply
// unread.
func (tc *trackedConn) writeUnread() bool {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	return tc.writeAt > tc.read
}

// receiveDone records a reply read by a Receive: a server's error reply
// is one too; any other failure leaves the connection failed anyway.
func (tc *trackedConn) receiveDone(err error) {
	if err == nil || isRedisError(err) {
		tc.replyRead(err)
	}
	tc.noteProtocolError(err)
}

// noteProtocolError notes a protocol error reply (see protoErr).
func (tc *trackedConn) noteProtocolError(err error) {
	if re, ok := err.(redis.Error); ok && isProtocolError(re) {
		tc.mu.Lock()
		if !tc.protoErr {
			tc.protoReply = re
		}
		tc.protoErr, tc.dirty = true, true
		tc.mu.Unlock()
	}
}

// notProtocolError takes back what noteProtocolError noted for a reply
// that only read as a protocol error: the server answered a command
// written after it, so it did not close the connection (see readAhead).
// The connection stays dirty: release closes it.
func (tc *trackedConn) notProtocolError() {
	tc.mu.Lock()
	tc.protoErr, tc.protoReply = false, ""
	tc.mu.Unlock()
}

// serverClosing notes that the server closes the connection after the
// reply just read (closing).
func (tc *trackedConn) serverClosing() {
	tc.mu.Lock()
	tc.closing = true
	tc.mu.Unlock()
}

// markDirty makes release close the connection whatever it ran.
func (tc *trackedConn) markDirty() {
	tc.mu.Lock()
	tc.dirty = true
	tc.mu.Unlock()
}

// release gives the connection back: restored (DISCARD, UNWATCH) when only
// a transaction was left open, closed when anything else changed its state,
// it failed, or the reply of a blocking command sent on it is unread. Only
// the first call does anything.
func (tc *trackedConn) release() error {
	tc.mu.Lock()
	if tc.released {
		tc.mu.Unlock()
		return nil
	}
	tc.released = true
	dirty, watching, multi := tc.dirty || tc.asking, tc.watching, tc.multi
	defer tc.hooks.release() // after the lock: it runs the hooks
	if tc.blockedAt > tc.read {
		// A blocking command's reply is unread: draining it (the undo
		// below, or the pool's return) would wait until the server
		// answers it or the read timeout passes, and take whatever it
		// pops meanwhile. Closed, the server forgets the command.
		dirty = true
	}
	tc.mu.Unlock()
	if !dirty && (watching || multi) && tc.conn.Err() == nil {
		undo := "UNWATCH"
		if multi {
			undo = "DISCARD" // also forgets the watched keys
		}
		// Do reads every reply still pending first, then the undo's.
		if reply, err := tc.conn.Do(undo); err != nil || reply != "OK" {
			dirty = true
		}
	} else if watching || multi {
		dirty = true
	}
	if dirty {
		tc.abort()
	}
	return tc.conn.Close()
}

// Close gives the connection back (release): code that closes the
// connection it was lent does no harm.
func (tc *trackedConn) Close() error { return tc.release() }

// Err returns the connection's failure, or nil while it is usable.
func (tc *trackedConn) Err() error {
	tc.mu.Lock()
	released := tc.released
	tc.mu.Unlock()
	if released {
		return errTrackedReleased
	}
	return tc.conn.Err()
}

// errTrackedReleased is the error of every call on a lent connection
// once it was given back: it matches ErrConnClosed.
var errTrackedReleased = fmt.Errorf("%w: it was lent for the duration of a callback or transaction", ErrConnClosed)

// usable returns nil while commands may be written on the connection:
// not once it was given back, nor after a protocol error reply
// (errAfterProtocolError: the command is not written, and did not run).
func (tc *trackedConn) usable() error {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if tc.released {
		return errTrackedReleased
	}
	if tc.protoErr {
		return errAfterProtocolError
	}
	return nil
}

// closedByServer returns, without a round trip, the failure of the
// connection when the server closed it (its socket shows the end of the
// stream or a reset, or a command on it failed so), and nil while it may
// still be written on, or when it failed otherwise (a timeout).
func (tc *trackedConn) closedByServer() error {
	tc.mu.Lock()
	closing := tc.closing
	tc.mu.Unlock()
	if closing {
		return errPeerClosed
	}
	if tc.closed == nil || !tc.closed() {
		return nil
	}
	if err := tc.conn.Err(); err != nil {
		if serverClosed(err) {
			return err
		}
		return nil
	}
	return errPeerClosed
}

// errPeerClosed is the failure of a connection whose socket shows that
// the server closed it.
var errPeerClosed = errors.New("connection closed by the server")

// protocolRefusal returns the protocol error reply after which the
// server closed the connection (see protoErr), and false when there was
// none.
func (tc *trackedConn) protocolRefusal() (redis.Error, bool) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	return tc.protoReply, tc.protoErr
}

// readable is usable for reads: the replies that came before a protocol
// error reply are still read.
func (tc *trackedConn) readable() error {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if tc.released {
		return errTrackedReleased
	}
	return nil
}

// Do notes and sends a command, then reads its reply (redis.Conn).
func (tc *trackedConn) Do(name string, args ...any) (any, error) {
	if err := tc.usable(); err != nil {
		return nil, err
	}
	tc.note(name, args)
	var reply any
	var err error
	defer func() { tc.doDone(err) }()
	earlier, run := tc.hooks.doStart(name, args)
	wait, blocking := tc.replyWait()
	reply, err = tc.whileBlocking(blocking, func() (any, error) {
		if blocking {
			return redis.DoWithTimeout(tc.conn, wait, name, args...)
		}
		return tc.conn.Do(name, args...)
	})
	tc.hooks.doEnd(earlier, run, name == "", reply, err)
	tc.noteProtocolError(err)
	return reply, err
}

// DoContext is Do bounded by ctx (redis.ConnWithContext). With a context
// that has already ended nothing is written: the command fails with the
// context's error (written, it would run, its reply lost with the
// connection that the context's end closes).
func (tc *trackedConn) DoContext(ctx context.Context, name string, args ...any) (any, error) {
	if err := tc.usable(); err != nil {
		return nil, err
	}
	if err := ctxEnded(ctx); err != nil {
		return nil, fmt.Errorf("shardis: %w (%s not sent)", err, strings.ToUpper(name))
	}
	tc.note(name, args)
	var reply any
	var err error
	defer func() { tc.doDone(err) }()
	earlier, run := tc.hooks.doStartIn(ctx, name, args)
	wait, blocking := tc.replyWait()
	reply, err = tc.whileBlocking(blocking, func() (any, error) {
		if blocking {
			return tc.blockingIn(ctx, wait, func(t time.Duration) (any, error) { return redis.DoWithTimeout(tc.conn, t, name, args...) })
		}
		return redis.DoContext(tc.conn, ctx, name, args...)
	})
	tc.hooks.doEnd(earlier, run, name == "", reply, err)
	tc.noteProtocolError(err)
	return reply, err
}

// DoWithTimeout is Do with a read timeout of its own (redis.ConnWithTimeout).
func (tc *trackedConn) DoWithTimeout(timeout time.Duration, name string, args ...any) (any, error) {
	if err := tc.usable(); err != nil {
		return nil, err
	}
	blocking := tc.note(name, args)
	if !blocking {
		_, blocking = tc.replyWait() // a blocking command sent before
	}
	var reply any
	var err error
	defer func() { tc.doDone(err) }()
	earlier, run := tc.hooks.doStart(name, args)
	reply, err = tc.whileBlocking(blocking, func() (any, error) { return redis.DoWithTimeout(tc.conn, timeout, name, args...) })
	tc.hooks.doEnd(earlier, run, name == "", reply, err)
	tc.noteProtocolError(err)
	return reply, err
}

// Send notes and queues a command (redis.Conn).
func (tc *trackedConn) Send(name string, args ...any) error {
	if err := tc.usable(); err != nil {
		return err
	}
	tc.note(name, args)
	tc.hooks.send(name, args)
	return tc.conn.Send(name, args...)
}

// Flush sends the queued commands (redis.Conn).
func (tc *trackedConn) Flush() error {
	if err := tc.usable(); err != nil {
		return err
	}
	tc.hooks.flush()
	err := tc.conn.Flush()
	if err != nil {
		tc.hooks.received(nil, err) // the runs flushed get no reply
	}
	return err
}

// Receive reads the next reply (redis.Conn).
func (tc *trackedConn) Receive() (any, error) {
	if err := tc.readable(); err != nil {
		return nil, err
	}
	wait, blocking := tc.replyWait()
	reply, err := tc.whileBlocking(blocking, func() (any, error) {
		if blocking {
			return redis.ReceiveWithTimeout(tc.conn, wait)
		}
		return tc.conn.Receive()
	})
	tc.receiveDone(err)
	tc.hooks.received(reply, replyErr(reply, err))
	return reply, err
}

// ReceiveContext is Receive bounded by ctx (redis.ConnWithContext).
func (tc *trackedConn) ReceiveContext(ctx context.Context) (any, error) {
	if err := tc.readable(); err != nil {
		return nil, err
	}
	wait, blocking := tc.replyWait()
	reply, err := tc.whileBlocking(blocking, func() (any, error) {
		if blocking {
			return tc.blockingIn(ctx, wait, func(t time.Duration) (any, error) { return redis.ReceiveWithTimeout(tc.conn, t) })
		}
		return redis.ReceiveContext(tc.conn, ctx)
	})
	tc.receiveDone(err)
	tc.hooks.received(reply, replyErr(reply, err))
	return reply, err
}

// ReceiveWithTimeout is Receive with a timeout of its own
// (redis.ConnWithTimeout).
func (tc *trackedConn) ReceiveWithTimeout(timeout time.Duration) (any, error) {
	if err := tc.readable(); err != nil {
		return nil, err
	}
	_, blocking := tc.replyWait()
	reply, err := tc.whileBlocking(blocking, func() (any, error) { return redis.ReceiveWithTimeout(tc.conn, timeout) })
	tc.receiveDone(err)
	tc.hooks.received(reply, replyErr(reply, err))
	return reply, err
}

// replyErr is the error of a reply that Receive read: the error itself,
// or the server's error reply, which Receive returns as both.
func replyErr(reply any, err error) error {
	if err != nil {
		return err
	}
	if re, ok := reply.(redis.Error); ok {
		return re
	}
	return nil
}

// blockingIn runs read, a wait for the reply of a blocking command, with
// the timeout wait (0: without limit) cut short by ctx's deadline; ctx's
// end closes the connection, as the pooled connection's DoContext does,
// and the error then matches the context's error and says the command
// may have run. read gets the timeout.
func (tc *trackedConn) blockingIn(ctx context.Context, wait time.Duration, read func(time.Duration) (any, error)) (any, error) {
	t, byCtx := wait, false
	if dl, ok := ctx.Deadline(); ok {
		if rem := max(time.Until(dl), time.Nanosecond); t == 0 || rem < t {
			t, byCtx = rem, true
		}
	}
	ended := func() bool { return false }
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, tc.abort)
		ended = func() bool { return !stop() }
	}
	reply, err := read(t)
	cut := ended()
	if err == nil || isRedisError(err) {
		return reply, err
	}
	var ne net.Error
	if cut || byCtx && errors.As(err, &ne) && ne.Timeout() {
		cerr := ctx.Err()
		if cerr == nil {
			cerr = context.DeadlineExceeded // the socket's deadline, armed from ctx's, came first
		}
		err = errtext.Errorf("shardis: %w before the reply came (the command may have run): %w", cerr, err)
	}
	return reply, err
}

// whileBlocking runs read, a wait that may be for the reply of a blocking
// command (blocking), which the server may hold back without end (BLPOP
// with timeout 0), so that Close ends it: Close closes the connection,
// and the read fails with an error wrapping ErrClosed (the command may
// have run). Any other read is bounded by its own timeouts and runs as is.
func (tc *trackedConn) whileBlocking(blocking bool, read func() (any, error)) (any, error) {
	if !blocking || tc.life == nil {
		return read()
	}
	stop := context.AfterFunc(tc.life, tc.abort)
	reply, err := read()
	if !stop() && err != nil && !isRedisError(err) {
		err = errtext.Errorf("%w: cut off while waiting for the reply (it may have run): %w", ErrClosed, err)
		if tc.writeUnread() {
			err = &cutWriteError{err: err} // a write may have run: OutcomeUnknown
		}
	}
	return reply, err
}
