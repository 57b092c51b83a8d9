package pool

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/dialedaddr"
)

// liveConn is the redis.Conn that the pools hand out. It speaks RESP
// itself, with redigo's semantics (replies, pending counts, Do flushing
// and draining, a failed connection staying failed), over a coarseConn
// that arms each deadline right before a system call:
//
//   - Send encodes straight into one write buffer, which Flush sends in
//     one system call (or a piece of up to maxWriteBuffer at a time);
//   - replies are parsed from a read buffer filled up to readBufferSize
//     bytes per system call;
//   - no lock is taken per command: one goroutine may send while another
//     receives, as redigo allows, because each side has its own buffer.
//
// It also remembers its socket, so that the pool can tell, before
// handing it out, whether the server has already closed it (a killed or
// restarted server). Writing a command to such a connection would leave
// its outcome unknown; noticing first lets the caller dial afresh instead.
type liveConn struct {
	nc          *coarseConn
	peek        *peeker       // nil where the socket cannot be peeked at
	readTimeout time.Duration // for Receive and Do; 0 waits forever

	wbuf    []byte       // encoded, not yet sent (the sending goroutine's); nil when flushed
	wbox    *writeBuffer // carries wbuf back to writeBuffers (buffers.go)
	rd      replyReader  // the receiving goroutine's
	pending atomic.Int64 // commands sent whose replies were not read

	failed atomic.Bool
	mu     sync.Mutex
	err    error // the first failure; the connection is closed then
	// lends counts the borrows of the connection (under mu): a context's
	// callback or an abort that belongs to an earlier borrow, and runs
	// late, must not close the socket of the caller who has it now.
	lends uint64
	// readable: the connection failed on a write that the server's reset
	// cut short, and its socket stays open for the replies the server
	// sent before it (failWrite); the first read failure, Close or an
	// abort closes it (set and cleared under mu).
	readable atomic.Bool

	gen int64 // the pool's generation when it was dialed (Set.DropIdle)

	// changed: a command sent on it changed the connection's state in a
	// way the pool does not undo; the next borrow closes it (connstate.go).
	changed atomic.Bool
	// asking: the last command sent was ASKING, whose flag the server
	// keeps for the command after it; given back so, the next caller's
	// first command would run under it (connstate.go).
	asking atomic.Bool
	// watching and multi: WATCH and MULTI as the server sees them (set
	// by the sending goroutine, read by the borrow check). redigo's pool
	// ends a transaction left open, but takes an EXEC or DISCARD without
	// MULTI, which the server refuses, for its end: the keys stay
	// watched (connstate.go).
	watching, multi atomic.Bool

	// sent counts the commands sent, blockedAt is the number (in sent)
	// of the last one that may block on the server, and silenced says
	// that CLIENT REPLY OFF or SKIP, or REPLCONF, was sent: the pool's
	// return closes a connection whose pending replies may never come
	// instead of reading them (giveback.go). The sending goroutine's.
	sent, blockedAt int64
	silenced        bool
	// unsureAt is the number (in sent) of the last command that may
	// block sent inside a MULTI whose +OK had not been read, and
	// unsureMulti that MULTI's number: the server queued it only if it
	// accepted the MULTI (an ACL user without MULTI is refused), which
	// only the MULTI's reply tells (giveback.go). The sending goroutine's.
	unsureAt, unsureMulti int64
	// multiAt is the number (in sent) of the MULTI that opened the
	// transaction multi says is open (the sending goroutine's, read by
	// the receiving one); answered counts the replies read that answer
	// a command, so the last one read is that of command number
	// answered; multiOK is the number of the last MULTI whose +OK was
	// read (both the receiving goroutine's, multiOK read by the sending
	// one).
	multiAt, answered, multiOK atomic.Int64
	// endAt is the number (in sent) of the last EXEC or DISCARD that
	// ended the transaction multi said was open (the sending goroutine's,
	// read by the receiving one): its refusal means that the server
	// kept the transaction, or never had one (connstate.go).
	endAt atomic.Int64
	// unwatchAt is the number (in sent) of the last UNWATCH sent outside
	// the transaction multi says is open, which noteTx takes for the
	// watch's end (the sending goroutine's, read by the receiving one):
	// its refusal means that the keys stay watched (connstate.go).
	unwatchAt atomic.Int64
	// subscribed: a command of the SUBSCRIBE family (subscription) was
	// sent on it since it was last borrowed (set by the sending
	// goroutine, read by the receiving one, cleared by the borrow
	// check). Those get one reply per channel, so the replies read no
	// longer tell which command each answers: an error reply read then
	// marks it changed (next), and no reply is taken for a MULTI's +OK
	// (answer).
	subscribed atomic.Bool
	// drained: SUBSCRIBE or PSUBSCRIBE was sent on it since it was last
	// borrowed, so redigo's return reads every reply pending on it, those
	// of an unsubscribe included (noteSubscription; set by the sending
	// goroutine, cleared by the borrow check).
	drained atomic.Bool

	// The Set's connection name (names.go), nil for a connection of no
	// pool, and the generation of it that this connection carries
	// (touched only by the goroutine that owns the connection).
	names *names
	named int64

	// unverified is the address dialed while no reply has been read:
	// the first reply may be a full server's refusal of the connection
	// (refusedConnection), which answers no command (touched only by
	// the receiving goroutine once the connection is handed out).
	unverified string
	// dialed holds the address dialed (for a resolved pool, the one the
	// name resolved to then), answered to dialedaddr.Query.
	dialed dialedaddr.Reply
}

const (
	maxWriteBuffer = 64 << 10  // sent at once beyond this
	keepWriteCap   = 256 << 10 // a larger buffer is dropped after use
	readBufferSize = 16 << 10  // bytes read per system call
)

var (
	_ redis.ConnWithTimeout = (*liveConn)(nil)
	_ redis.ConnWithContext = (*liveConn)(nil)
)

func newLiveConn(nc *coarseConn, readTimeout time.Duration) *liveConn {
	lc := &liveConn{nc: nc, readTimeout: readTimeout, peek: newPeeker(nc.Conn)}
	lc.rd.nc = nc
	return lc
}

// fail records err as the connection's failure unless it already has
// one, closes the socket so that the other side's I/O ends too, and
// returns the failure: a read cut short by a cancelled context reports
// the context's error, not the closed socket's.
func (c *liveConn) fail(err error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		c.err = err
		c.failed.Store(true)
		c.cut()
	} else if c.readable.Load() {
		c.cut() // the replies left after a failed write are read
	}
	return c.err
}

// failWrite records err, a write that the server's reset cut short, as
// the connection's failure, but keeps its socket open for reading: the
// replies the server sent before it reset the connection are still
// there, and a read returns them and then the reset at once, never
// waiting. A server that refuses a value over its proto-max-bulk-len
// answers with a protocol error and resets the connection while the
// value is still being written: the command's reply is that refusal (it
// did not run), where the write's error alone would leave the outcome of
// every command written whole before it unknown.
func (c *liveConn) failWrite(err error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		c.err = err
		c.readable.Store(true) // before failed: a reader that sees failed sees readable
		c.failed.Store(true)
	}
	return c.err
}

// peerReset reports whether a write failed because the server reset the
// connection (or, reset before, it no longer takes writes).
func peerReset(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// lent counts a new borrow of c and returns its number.
func (c *liveConn) lent() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lends++
	return c.lends
}

// lend returns the number of c's current borrow.
func (c *liveConn) lend() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lends
}

// failLend is fail, unless c has been borrowed again since borrow n: a
// callback of a context that ended as the caller gave c back does not
// touch the next caller's connection.
func (c *liveConn) failLend(n uint64, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lends != n {
		return
	}
	if c.err == nil {
		c.err = err
		c.failed.Store(true)
		c.cut()
	} else if c.readable.Load() {
		c.cut()
	}
}

// errAborted is the failure of a connection closed by GetAbortable's
// abort; it matches net.ErrClosed, as the I/O it cut short would.
var errAborted = fmt.Errorf("shardis: connection aborted: %w", net.ErrClosed)

// closeLend closes c's socket and marks c failed, unless c has been
// borrowed again since borrow n (see failLend). Marked, c is dropped
// when it is given back even if no I/O noticed the closed socket: where
// the socket cannot be peeked at (peek_other.go), nothing else would
// keep it out of the pool.
func (c *liveConn) closeLend(n uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lends != n {
		return
	}
	if c.err == nil {
		c.err = errAborted
		c.failed.Store(true)
	}
	c.cut()
}

// Err returns the connection's failure, or nil while it is usable.
func (c *liveConn) Err() error {
	if !c.failed.Load() {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Close closes the socket; later calls fail with ErrConnClosed. A TLS
// connection first says so to the server (close_notify), which may wait
// on a server that does not read (crypto/tls bounds it to 5 s): that is
// done without the connection's mutex held.
func (c *liveConn) Close() error {
	c.mu.Lock()
	if c.err != nil {
		if c.readable.Load() {
			c.cut() // left open for the replies after a failed write
		}
		c.mu.Unlock()
		return nil
	}
	c.err = ErrConnClosed
	c.failed.Store(true)
	c.mu.Unlock()
	return c.nc.Conn.Close()
}

// cut closes the socket at once, under c.mu, for a failure or an abort:
// I/O in progress on it ends now. Under TLS the TCP connection is closed
// without the close_notify alert, whose write would wait (up to 5 s in
// crypto/tls) on a server that does not read, keeping both the read it
// must end and every caller of c.mu waiting: a connection cut short is
// broken anyway, and RESP needs no alert to tell a reply's end.
func (c *liveConn) cut() {
	c.readable.Store(false)
	if tc, ok := c.nc.Conn.(*tls.Conn); ok {
		tc.NetConn().Close()
		return
	}
	c.nc.Conn.Close()
}

// Send queues a command; Flush sends what is queued.
func (c *liveConn) Send(cmd string, args ...any) error {
	if c.failed.Load() {
		return c.Err()
	}
	c.pending.Add(1)
	c.noteSent(cmd, args)
	if c.wbuf == nil {
		c.takeWriteBuffer()
	}
	c.wbuf = appendCommand(c.wbuf, cmd, args)
	if len(c.wbuf) >= maxWriteBuffer {
		return c.write()
	}
	return nil
}

// Flush sends the queued commands. Under redigo's return of a
// subscribed connection, which flushes an ECHO and then reads up to its
// reply, a reply pending before it that may never come (unanswered)
// would hold that reply back: the connection is closed instead
// (giveback.go), and the read that follows fails at once.
func (c *liveConn) Flush() error {
	if c.failed.Load() {
		return c.Err()
	}
	if c.unanswered() && returning() {
		c.giveUp()
		return nil
	}
	if len(c.wbuf) == 0 {
		return nil
	}
	return c.write()
}

func (c *liveConn) write() error {
	_, err := c.nc.armedWrite(c.wbuf)
	c.releaseWriteBuffer()
	if err != nil {
		if peerReset(err) {
			return c.failWrite(err)
		}
		return c.fail(err)
	}
	return nil
}

// Receive reads the next reply, waiting at most the read timeout.
func (c *liveConn) Receive() (any, error) {
	return c.ReceiveWithTimeout(c.readTimeout)
}

// ReceiveWithTimeout reads the next reply, waiting at most timeout (0:
// forever; negative, as in redigo: not at all, only a reply already
// received is read) for the whole of it, however slowly its bytes arrive. A server error reply is returned as a redis.Error; a failure
// to read closes the connection.
func (c *liveConn) ReceiveWithTimeout(timeout time.Duration) (any, error) {
	if c.failed.Load() && !c.readable.Load() {
		return nil, c.Err()
	}
	c.nc.startReply(timeout)
	reply, err := c.next()
	if err != nil {
		return nil, c.fail(err)
	}
	// Pub/sub delivers more replies than commands were sent: never below 0.
	for {
		n := c.pending.Load()
		if n <= 0 {
			break
		}
		if c.pending.CompareAndSwap(n, n-1) {
			c.answer(reply)
			break
		}
	}
	c.replied()
	if e, ok := reply.(redis.Error); ok {
		return nil, e
	}
	return reply, nil
}

// next reads the next reply. The first reply of a connection whose dial
// sent no command (no AUTH, no CLIENT SETNAME, ...) may be the refusal a
// server at maxclients sends every new connection before it reads
// anything: that is no reply to the caller's command, which never ran,
// but a failed dial, and it fails the connection as a *DialError.
//
// A plain-text connection that the server closes or resets before its
// first reply is most likely talking to a port that expects TLS (a
// redis-server with tls-port resets it at the first command): the error
// then also wraps ErrClosedBeforeReply, which says so. So does a first
// reply that begins as a TLS alert record (errTLSAlert), which other TLS
// servers send instead, perhaps without closing.
//
// An error reply read on a connection that sent a command of the
// SUBSCRIBE family (liveConn.subscribed) marks it changed:
// redigo's return reads a subscribed connection up to the reply of an
// ECHO it sends after UNSUBSCRIBE and PUNSUBSCRIBE, but stops at the
// first error reply (that of the UNWATCH it sends for a WATCH left
// behind, which the server refuses in subscribed mode, say) and then
// reads only the replies it counts as pending; the messages delivered
// and the replies of an UNSUBSCRIBE of several channels were counted as
// replies to commands, so more may be coming. Set.Pool's return, given
// the connection after that, would read them for its own and leave its
// own for the next caller; the borrow check closes it instead.
func (c *liveConn) next() (any, error) {
	if c.unverified != "" {
		return c.first()
	}
	r, err := c.rd.reply(0, c.rd.batchArena(c.pending.Load()))
	if e, ok := r.(redis.Error); ok && (protocolErrorReply(e) || c.subscribed.Load()) {
		// The server is closing it (connstate.go), or replies may be
		// left unread on it (see above).
		c.changed.Store(true)
	}
	return r, err
}

// first is next for the connection's first reply (c.unverified set).
func (c *liveConn) first() (any, error) {
	_, isTLS := c.nc.Conn.(*tls.Conn)
	var (
		r   any
		err error
	)
	if !isTLS {
		err = c.rd.tlsAlert()
	}
	if err == nil {
		r, err = c.rd.reply(0, nil)
	}
	if e, ok := r.(redis.Error); ok && protocolErrorReply(e) {
		c.changed.Store(true) // the server is closing it (connstate.go)
	}
	if err != nil {
		if !isTLS && closedBeforeReply(err) {
			err = fmt.Errorf("%w: %w", ErrClosedBeforeReply, err)
		}
		return nil, err
	}
	addr := c.unverified
	c.unverified = ""
	if e, ok := r.(redis.Error); ok && refusedConnection(e) {
		return nil, &DialError{Addr: addr, Err: e}
	}
	return r, nil
}

// closedBeforeReply reports whether err is the end of the stream or a
// reset by the peer.
func closedBeforeReply(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET)
}

// ReceiveContext is ReceiveWithTimeout bounded by ctx: its deadline cuts
// the wait short (the error then matches context.DeadlineExceeded), and
// its cancellation closes the connection.
func (c *liveConn) ReceiveContext(ctx context.Context) (any, error) {
	if ctx == dialedaddr.Query {
		return &c.dialed, nil // not a read: the address it was dialed to
	}
	defer c.watch(ctx)()
	timeout, byCtx := c.within(ctx)
	reply, err := c.ReceiveWithTimeout(timeout)
	return reply, deadlineCause(ctx, byCtx, err)
}

// Do sends a command, flushes, and reads the replies of every command
// sent before it and then its own; it returns its own reply, or the
// first server error among them. Do("") only flushes and reads what is
// pending, and returns the pending replies.
func (c *liveConn) Do(cmd string, args ...any) (any, error) {
	if cmd == "" && !c.failed.Load() {
		if c.unanswered() && returning() {
			// The pool's return: close rather than wait (giveback.go).
			c.giveUp()
			return nil, nil
		}
		if _, stale := c.stale(); stale && c.pending.Load() == 0 && returning() {
			// The pool's return of a connection under an old name
			// (names.go); a caller's own Do("") sends nothing.
			c.renameOnReturn()
			return nil, nil
		}
	}
	return c.DoWithTimeout(c.readTimeout, cmd, args...)
}

// DoWithTimeout is Do with a read timeout of its own (0: forever;
// negative: already passed), which bounds the wait for all the replies it
// reads, as in redigo.
func (c *liveConn) DoWithTimeout(timeout time.Duration, cmd string, args ...any) (any, error) {
	pending := int(c.pending.Swap(0))
	if cmd == "" && pending == 0 {
		return nil, nil
	}
	if c.failed.Load() {
		return nil, c.Err()
	}
	if cmd != "" {
		c.noteSent(cmd, args)
		if c.wbuf == nil {
			c.takeWriteBuffer()
		}
		c.wbuf = appendCommand(c.wbuf, cmd, args)
	}
	if err := c.Flush(); err != nil {
		return nil, err
	}
	c.nc.startReply(timeout)
	if cmd == "" {
		replies := make([]any, pending)
		for i := range replies {
			r, err := c.next()
			if err != nil {
				return nil, c.fail(err)
			}
			c.answer(r)
			replies[i] = r
		}
		c.replied()
		return replies, nil
	}
	var (
		reply    any
		firstErr error
	)
	for range pending + 1 {
		r, err := c.next()
		if err != nil {
			return nil, c.fail(err)
		}
		c.answer(r)
		if e, ok := r.(redis.Error); ok && firstErr == nil {
			firstErr = e
		}
		reply = r
	}
	c.replied()
	return reply, firstErr
}

// DoContext is DoWithTimeout bounded by ctx: its deadline cuts the wait
// short (the error then matches context.DeadlineExceeded), and its
// cancellation closes the connection. With a context that
// has already ended (or whose deadline has passed) nothing is written: it
// fails with the context's error and the connection stays as it was
// (written, the command would run and its reply be lost).
func (c *liveConn) DoContext(ctx context.Context, cmd string, args ...any) (any, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("shardis: %w (nothing sent)", err)
	}
	if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
		return nil, fmt.Errorf("shardis: %w (nothing sent)", context.DeadlineExceeded)
	}
	defer c.watch(ctx)()
	timeout, byCtx := c.within(ctx)
	reply, err := c.DoWithTimeout(timeout, cmd, args...)
	return reply, deadlineCause(ctx, byCtx, err)
}

// watch closes the connection if ctx ends before the returned function
// is called; the I/O in progress then fails with the context's error.
func (c *liveConn) watch(ctx context.Context) func() {
	if ctx.Done() == nil {
		return func() {}
	}
	n := c.lend()
	stop := context.AfterFunc(ctx, func() { c.failLend(n, context.Cause(ctx)) })
	return func() { stop() }
}

// within returns the read timeout cut short by ctx's deadline, and
// whether ctx's deadline is the shorter.
func (c *liveConn) within(ctx context.Context) (time.Duration, bool) {
	t := c.readTimeout
	if dl, ok := ctx.Deadline(); ok {
		rem := max(time.Until(dl), time.Nanosecond) // a past deadline times out at once
		if t == 0 || rem < t {
			return rem, true
		}
	}
	return t, false
}

// deadlineCause makes a timeout that ctx's deadline caused match
// context.DeadlineExceeded. The socket's read deadline, armed from ctx's
// (byCtx), and ctx's own timer (watch) end the wait at the same time:
// whichever wins, the caller learns that its deadline passed, not a bare
// "i/o timeout" that reads like a slow node.
func deadlineCause(ctx context.Context, byCtx bool, err error) error {
	if !byCtx || err == nil || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		return err
	}
	// A read armed from ctx's deadline never times out before it
	// (deadline.go): a timeout with time left is a write's.
	if dl, ok := ctx.Deadline(); !ok || time.Until(dl) > 0 {
		return err // a write timeout, before ctx's deadline
	}
	return fmt.Errorf("shardis: %w (%w)", context.DeadlineExceeded, err)
}

// closedByPeer reports whether the server has closed the connection (or
// sent bytes nobody asked for), without blocking and without consuming
// anything.
func (c *liveConn) closedByPeer() bool {
	if c.rd.buffered() {
		return true
	}
	// The last reply's read deadline stays armed after it (deadline.go)
	// and passes while the connection is idle; a peek under a passed
	// deadline fails without looking at the socket, which would drop
	// every connection idle for longer than ReadTimeout. Lift it first.
	if r := c.nc.read; !r.IsZero() && !time.Now().Before(r) {
		if err := c.nc.armRead(time.Time{}, time.Time{}); err != nil {
			return true
		}
	}
	closed, tlsBytes := c.peek.closed()
	if tlsBytes {
		return c.tlsClosed()
	}
	return closed
}

// closedSinceLend reports whether borrow n of c has ended (the connection
// was given back), c has failed, or the server has closed it
// (closedByPeer). The caller holds borrow n and reads no reply meanwhile.
func (c *liveConn) closedSinceLend(n uint64) bool {
	if c.lend() != n || c.failed.Load() {
		return true
	}
	return c.closedByPeer()
}

// tlsPeek bounds the read that tells what waits on an idle TLS connection.
const tlsPeek = 2 * time.Millisecond

// tlsPeekTries bounds the reads of tlsClosed.
const tlsPeekTries = 3

// tlsClosed reads what waits on an idle TLS connection through TLS, for
// at most tlsPeek: a session ticket is consumed and the read times out
// (the connection is fine; a timed-out read leaves a TLS connection
// usable); the server's close_notify ends the stream (it closed the
// connection: a killed client, a timeout, a restart); application data
// nobody asked for means the protocol is out of step. A read that timed
// out while bytes still wait on the socket was late, not unanswered (a
// goroutine descheduled past the deadline on a loaded machine fails its
// read without looking at the socket): it is tried again, a few times,
// so that a close_notify that had arrived is not taken for a quiet
// connection.
func (c *liveConn) tlsClosed() bool {
	for try := 1; ; try++ {
		now := time.Now()
		if err := c.nc.armRead(now.Add(tlsPeek), now); err != nil {
			return true
		}
		var b [1]byte
		n, err := c.nc.Conn.Read(b[:])
		if n > 0 {
			return true
		}
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			return true
		}
		if c.nc.armRead(time.Time{}, time.Time{}) != nil {
			return true
		}
		closed, tlsBytes := c.peek.closed()
		if closed {
			return true
		}
		if !tlsBytes || try == tlsPeekTries {
			return false
		}
	}
}
