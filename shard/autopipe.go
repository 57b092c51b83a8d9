package shard

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/errtext"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard/command"
)

// Automatic pipelining (Config.AutoPipeline): the single commands that
// many goroutines send to one node share one connection. A writer
// goroutine per node takes whatever has queued up, writes it and flushes
// once; a reader goroutine per connection reads the replies in order and
// hands each to its caller. Under concurrency a node then sees one write
// and one read per batch instead of one per command, which is what makes
// rueidis fast; routing, redirects and retries stay the executor's.

// maxAutoBatch bounds the commands written with one flush.
const maxAutoBatch = 512

// pipeIdleCheck is how long a pipeline's connection may go unused before
// it is returned to the pool and borrowed again (and so checked) for the
// next batch. A pool with a MaxActive cap gets its connection back as soon
// as nothing is queued or in flight on it: a pipeline must not sit on one
// of the few connections other callers may be waiting for (nor wait for
// the pool to give back the connection it has just returned).
const pipeIdleCheck = 100 * time.Millisecond

// closeGrace is how long Close lets the replies of commands in flight on
// the automatic pipelines arrive before it closes their connections: a
// hung server never holds Close up for a read timeout.
const closeGrace = 50 * time.Millisecond

// autoQueue is how many commands may wait for the writer, and how many
// may wait for their replies on one connection, before callers wait.
const autoQueue = 4096

// pipeReq is one command waiting in an automatic pipeline.
type pipeReq struct {
	cl *call // read by the writer only: the caller may give up on it
	// pre are commands written right before cl on the same connection,
	// with no other command between them: a transaction's MULTI and
	// queued commands, cl its EXEC (autopipe_tx.go). Their replies are
	// read and dropped; cl's is the answer.
	pre []*call
	// ctx is the caller's: a command whose caller's context has ended by
	// the time the writer writes its batch is not written (take).
	ctx context.Context
	// cut is cl.cut, kept here for take, which must not read cl: its
	// caller may have given up on it and reused it.
	cut *atomic.Bool
	// state settles, with one compare-and-swap, the race between the
	// writer taking the command and its caller giving up on it.
	state atomic.Int32
	reply any
	err   error
	done  chan struct{} // receives once reply and err are set
	// sent is when the writer finished writing its batch (the flush
	// returned): its reply is waited for until sent plus the read
	// timeout, however many replies are read before it on the
	// connection; one clock read per batch instead of per command.
	sent time.Time
	// unwritten is set by the writer on the command that a failed write
	// cut short: its result unless the server refused it with a protocol
	// error before it reset the connection (pipeConn.readCut).
	unwritten error
	// proves is whether the reply proves that the node serves
	// (replyProves), set before the caller may give up on cl.
	proves bool
	// mimics is whether cl's own error reply may read as the server's
	// protocol error (mayReadAsProtocolError), set likewise.
	mimics bool
	// refused holds, by position, the error replies to pre (nil when
	// none came): set by the reader, read by the caller with reply.
	refused []error
}

// The states of a pipeReq. A queued command is taken by the writer to be
// written (reqTaken: it may run from then on), or dropped by the writer
// unsent and finished with the reason (reqDropped), or given up by its
// caller first (reqGaveUp): then only the writer still holds it, never
// writes it, and recycles it when it comes to it. So a caller whose
// context ends knows whether its command can still run.
const (
	reqQueued int32 = iota
	reqTaken
	reqDropped
	reqGaveUp
)

var pipeReqs = sync.Pool{New: func() any { return &pipeReq{done: make(chan struct{}, 1)} }}

// recycle puts back a pipeReq that nobody else holds and whose done
// channel is empty.
func (r *pipeReq) recycle() {
	r.cl, r.pre, r.ctx, r.cut, r.reply, r.err, r.unwritten, r.refused = nil, nil, nil, nil, nil, nil, nil, nil
	pipeReqs.Put(r)
}

// autoPipe multiplexes the single commands for one node.
type autoPipe struct {
	c    *Client
	node int
	reqs chan *pipeReq
	// dead is closed when the writer has stopped and every command it
	// took has its result: a command still queued then was never sent.
	dead    chan struct{}
	readers sync.WaitGroup // the readers of its connections
	users   atomic.Int32   // callers sending a single command to the node now

	mu    sync.Mutex
	conns map[*pipeConn]struct{} // connections whose reader runs
}

// autoPipes holds the automatic pipelines by node, created on first use.
type autoPipes struct {
	mu    sync.Mutex
	pipes atomic.Pointer[[]*autoPipe] // indexed by node; read without the lock
}

// pipe returns node's automatic pipeline, starting it on first use, or
// nil once the client is closed.
func (c *Client) pipe(node int) *autoPipe {
	if ps := c.autoPipes.pipes.Load(); ps != nil && node < len(*ps) && (*ps)[node] != nil {
		return (*ps)[node]
	}
	c.autoPipes.mu.Lock()
	defer c.autoPipes.mu.Unlock()
	var cur []*autoPipe
	if ps := c.autoPipes.pipes.Load(); ps != nil {
		cur = *ps
	}
	if node < len(cur) && cur[node] != nil {
		return cur[node]
	}
	if c.closed.Load() { // Close holds the lock once after setting closed
		return nil
	}
	next := make([]*autoPipe, max(len(cur), node+1))
	copy(next, cur)
	p := &autoPipe{c: c, node: node, reqs: make(chan *pipeReq, autoWaiting), dead: make(chan struct{}), conns: map[*pipeConn]struct{}{}}
	next[node] = p
	c.autoPipes.pipes.Store(&next)
	c.bg.Add(1)
	go p.write()
	return p
}

// pipeable reports whether a call may share a connection with other
// callers' commands: a command on keys that neither blocks, nor changes
// the connection's state (WATCH, MULTI, SUBSCRIBE, CLIENT SETNAME, ...:
// see connstate.go), nor follows an ASK redirect (ASKING must come right
// before it on its connection).
func pipeable(cl *call) bool {
	if cl.asking || cl.stateful || cl.info == nil {
		return false
	}
	info := cl.info.Resolve(cl.args)
	return info.HasKeys() && info.Flags&(command.PubSub|command.NoMulti) == 0 && !isBlocking(cl)
}

// autoDo sends a single pipeable call. When other callers are sending to
// the node at the same moment it goes through the node's automatic
// pipeline; a caller alone with the node uses a pooled connection of its
// own instead, since it would gain nothing from the pipeline and would pay
// its two goroutine hand-offs (unless alwaysPipe is set).
func (c *Client) autoDo(ctx context.Context, calls []*call) (abandoned bool) {
	cl := calls[0]
	p := c.pipe(cl.node)
	if p == nil {
		cl.err = ErrClosed
		return false
	}
	defer p.users.Add(-1)
	if p.users.Add(1) == 1 && !c.alwaysPipe {
		return c.runPooled(ctx, calls)
	}
	return c.autoRoundTrip(ctx, p, cl, nil)
}

// autoRoundTrip sends one call through its node's automatic pipeline p
// and waits for the result. It reports whether the pipeline still holds
// the call: the context ended after the writer took it (the command may
// run), or the pipeline stopped with it still in the queue.
//
// A call whose context ends before the writer takes it is never written:
// it fails with the context's error alone. One whose context ends after
// that fails with an error that also says the command may have run.
func (c *Client) autoRoundTrip(ctx context.Context, p *autoPipe, cl *call, pre []*call) (abandoned bool) {
	ns := c.nodes.get(cl.node)
	ns.commands.Add(int64(1 + len(pre)))
	if ns.down.Load() {
		ns.errors.Add(1)
		cl.err = &NodeError{Node: ns.node, Err: ns.downErr()}
		return false
	}
	r := pipeReqs.Get().(*pipeReq)
	r.cl, r.pre, r.ctx, r.cut = cl, pre, ctx, cl.cut
	r.proves = replyProves(cl, pre)
	r.mimics = len(pre) == 0 && mayReadAsProtocolError(cl)
	r.state.Store(reqQueued)
	select {
	case p.reqs <- r:
	case <-p.dead:
		r.recycle()
		cl.err = ErrClosed
		return false
	case <-ctx.Done():
		r.recycle()
		cl.err = fmt.Errorf("shardis: %w", ctx.Err())
		return false
	}
	select {
	case <-r.done:
	case <-p.dead:
		select {
		case <-r.done: // it was answered before the pipeline stopped
		default:
			cl.err = ErrClosed // still queued: never sent
			return true        // the channel may still hold r
		}
	case <-ctx.Done():
		if r.state.CompareAndSwap(reqQueued, reqGaveUp) {
			// Not written, and now it never will be; the writer
			// recycles r when it comes to it.
			cl.reply, cl.err = nil, fmt.Errorf("shardis: %w", ctx.Err())
			return false
		}
		if r.state.Load() == reqDropped {
			<-r.done // dropped unsent: its result is being set
			break
		}
		select {
		case <-r.done: // its reply came meanwhile
		default:
			// Taken by the writer: the reply will come and be
			// dropped; r stays with the pipeline.
			cl.reply, cl.err = nil, fmt.Errorf("shardis: %w before the reply came (the command may have run)", ctx.Err())
			return true
		}
	}
	cl.reply, cl.err = r.reply, r.err
	setRefused(pre, r.refused) // autopipe_tx.go
	r.recycle()
	return false
}

// finish stores a command's result and wakes its caller.
func (r *pipeReq) finish(reply any, err error) {
	r.reply, r.err = reply, err
	r.done <- struct{}{}
}

// take is the writer's decision, right before it writes r, whether r goes
// out: not when a migration's switch cut it off (r is finished with
// ErrFenceSwitched), its caller's context has ended (r is finished with the
// context's error) or its caller has given up on it (r is recycled).
func (r *pipeReq) take() bool {
	if r.cut != nil && r.cut.Load() {
		// A migration's switch came while it was queued: its key may
		// have moved (migrate_plan.go).
		r.drop(errCutBeforeWrite)
		return false
	}
	if err := r.ctx.Err(); err == nil {
		if r.state.CompareAndSwap(reqQueued, reqTaken) {
			return true
		}
	} else if r.state.CompareAndSwap(reqQueued, reqDropped) {
		r.finish(nil, fmt.Errorf("shardis: %w", err))
		return false
	}
	r.recycle() // given up: nobody else holds it
	return false
}

// drop fails r, which the writer has not taken, with err; or recycles it
// when its caller has given up on it.
func (r *pipeReq) drop(err error) {
	if r.state.CompareAndSwap(reqQueued, reqDropped) {
		r.finish(nil, err)
		return
	}
	r.recycle()
}

// write is the node's writer: it takes the queued commands, writes them on
// the current connection and flushes once per batch. It runs until the
// client closes.
func (p *autoPipe) write() {
	defer p.c.bg.Done()
	var (
		conn   *pipeConn
		batch  = make([]*pipeReq, 0, maxAutoBatch)
		closed = p.c.stop
		idle   = time.NewTimer(pipeIdleCheck)
		capped = p.c.pools.Options().MaxActive > 0
	)
	// When Close ends the client's life, replies on their way get
	// closeGrace to arrive; then the connections are closed, so that a
	// hung server cannot hold Close up. The grace starts with Close, not
	// when the writer returns: the writer itself may be stuck on a hung
	// server, writing a batch (for up to the write timeout) or waiting for
	// room in its reader's queue (for up to the read timeout), and only
	// closing its connection frees it.
	var (
		graceMu sync.Mutex
		grace   *time.Timer
		over    bool
	)
	stopWatch := context.AfterFunc(p.c.life, func() {
		graceMu.Lock()
		defer graceMu.Unlock()
		if !over {
			grace = time.AfterFunc(closeGrace, p.abortAll)
		}
	})
	defer func() {
		idle.Stop()
		if conn != nil {
			conn.finish()
		}
		p.readers.Wait() // the writer returns only on Close, which ends the life
		stopWatch()
		graceMu.Lock()
		over = true
		if grace != nil {
			grace.Stop()
		}
		graceMu.Unlock()
		close(p.dead)
	}()
	for {
		batch = batch[:0]
		select {
		case r := <-p.reqs:
			batch = append(batch, r)
		default:
			if conn != nil && capped && conn.outstanding.Load() == 0 {
				// A capped pool: hand the connection back while idle.
				conn.release()
				conn = nil
			}
			if conn == nil {
				select {
				case r := <-p.reqs:
					batch = append(batch, r)
				case <-closed:
					p.failQueued()
					return
				}
				break
			}
			// A connection unused for pipeIdleCheck is handed back, so
			// that the pool's check catches a connection the server
			// closed meanwhile (a restart, its idle timeout) before a
			// write is sent on it, and the pool has it for others. With
			// a cap, it goes back once its last reply is in (drained).
			idle.Reset(pipeIdleCheck)
			select {
			case r := <-p.reqs:
				batch = append(batch, r)
			case <-idle.C:
				conn.done(capped)
				conn = nil
				continue
			case <-conn.drained:
				if conn.outstanding.Load() == 0 {
					conn.release()
					conn = nil
				}
				continue
			case <-closed:
				p.failQueued()
				return
			}
		}
		batch = p.drain(batch)
		if len(batch) < maxAutoBatch && len(p.reqs) == 0 {
			// Let callers that are about to send run first: one more
			// command in this write saves a system call on both sides.
			runtime.Gosched()
			batch = p.drain(batch)
		}
		// A broken connection, or one borrowed before the client renamed
		// its connections (migrate_name.go): the pool renames it when it
		// comes back.
		// So is one borrowed before its node's address moved (a Sentinel
		// shard's failover): it still talks to the old master.
		if conn != nil && (conn.broken.Load() || conn.named != p.c.connNames.Load() || conn.epoch != p.c.nodes.get(p.node).epoch.Load()) {
			conn.done(capped)
			conn = nil
		}
		// So is one the server closed while nothing was on it (a
		// CLIENT KILL of idle connections, its timeout, a restart):
		// written there, the batch would fail for no fault of its own.
		// With no reply outstanding the reader does not touch the
		// connection, and the look (the pool's borrow check, a peek at
		// the socket without a round trip) is safe; nothing was written,
		// so the batch goes out on a connection borrowed afresh, whatever
		// its commands. Under load, when replies are always outstanding,
		// there is no look: a kill then fails the commands in flight
		// anyway.
		if conn != nil && conn.outstanding.Load() == 0 && conn.closed() {
			conn.abort() // never lent again
			conn.done(capped)
			conn = nil
		}
		if conn == nil {
			var err error
			if conn, err = p.connect(); err != nil {
				for _, r := range batch {
					r.drop(err)
				}
				continue
			}
		}
		if !conn.send(batch) {
			conn.done(capped)
			conn = nil
		}
	}
}

// drain adds what is queued to batch, without waiting, up to maxAutoBatch.
func (p *autoPipe) drain(batch []*pipeReq) []*pipeReq {
	for len(batch) < maxAutoBatch {
		select {
		case r := <-p.reqs:
			batch = append(batch, r)
		default:
			return batch
		}
	}
	return batch
}

// failQueued fails the commands still waiting for the writer of a closing
// client: none of them was sent.
func (p *autoPipe) failQueued() {
	for {
		select {
		case r := <-p.reqs:
			r.drop(ErrClosed)
		default:
			return
		}
	}
}

// connect borrows a connection for the pipeline and starts its reader.
// With a MaxActive cap and Wait, the wait for a free connection lasts at
// most a read timeout (and ends with Close).
func (p *autoPipe) connect() (*pipeConn, error) {
	ns := p.c.nodes.get(p.node)
	ctx, cancel := context.WithTimeout(p.c.life, p.c.readTimeout)
	defer cancel()
	named := p.c.connNames.Load() // before the borrow: a rename after it drops the connection
	epoch := ns.epoch.Load()      // likewise a failover
	conn, abort, closed, err := p.c.pools.GetProbed(ctx, ns.node.Addr, ns.readOnly)
	if err != nil {
		if p.c.closed.Load() {
			return nil, ErrClosed
		}
		p.c.noteFailure(ctx, p.node, err)
		return nil, &NodeError{Node: ns.node, Err: err}
	}
	pc := &pipeConn{p: p, conn: conn, abort: abort, closed: closed, named: named, epoch: epoch, inflight: make(chan *pipeReq, autoQueue), exited: make(chan struct{})}
	if p.c.pools.Options().MaxActive > 0 {
		pc.drained = make(chan struct{}, 1)
	}
	p.mu.Lock()
	p.conns[pc] = struct{}{}
	p.mu.Unlock()
	p.readers.Add(1)
	go pc.read()
	return pc, nil
}

// abortAll closes the connections whose replies are still awaited.
func (p *autoPipe) abortAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for pc := range p.conns {
		pc.aborted.Store(true)
		pc.abort()
	}
}

// pipeConn is one connection of an automatic pipeline: the writer sends
// on it, its reader receives. Once either side fails the connection is
// broken and the writer moves on to a new one.
type pipeConn struct {
	p        *autoPipe
	conn     redis.Conn
	abort    func()        // closes conn's socket, from any goroutine
	closed   func() bool   // the server closed conn (with no reply outstanding)
	inflight chan *pipeReq // sent, waiting for replies, in order
	broken   atomic.Bool
	aborted  atomic.Bool // closed by Close (abortAll)
	named    int64       // Client.connNames when it was borrowed
	epoch    int64       // its node's epoch when it was borrowed
	// outstanding counts the commands sent whose replies are not in yet
	// (the reader counts a reply once it is done with the connection);
	// with a MaxActive cap, drained signals the writer when that drops
	// to zero (nil without a cap).
	outstanding atomic.Int32
	drained     chan struct{}
	exited      chan struct{} // closed once the reader has returned conn
}

// send writes a batch and flushes it, leaving out the commands whose
// callers have given up (take). It reports false when the connection
// failed: the commands written so far get the error from the reader, the
// others get it here.
func (pc *pipeConn) send(batch []*pipeReq) bool {
	n := 0
	for _, r := range batch {
		if r.take() {
			batch[n] = r
			n++
		}
	}
	batch = batch[:n]
	var err error
	i := 0
	for ; i < len(batch); i++ {
		for _, cl := range batch[i].pre {
			if err = pc.conn.Send(cl.name, cl.args...); err != nil {
				break
			}
		}
		if err != nil {
			break
		}
		cl := batch[i].cl
		if err = pc.conn.Send(cl.name, cl.args...); err != nil {
			break
		}
	}
	if err == nil {
		err = pc.conn.Flush()
	}
	// A failed write on the pool's connection stops before the end of
	// what it was given, which ends with the command being queued (Send
	// writes its buffer once the command that fills it is in) or the last
	// one (Flush): that command was not completely written and did not
	// run, nor did the ones after it (Client.failSend says more). The
	// commands before it may have reached the server whole: the reader
	// gives them the connection's error.
	written := i
	if err != nil && i == len(batch) && len(batch) > 0 && writeFailed(err) && !pc.aborted.Load() {
		written = i - 1
	}
	var nerr error
	toReader := written // the commands whose results the reader gives
	if err != nil {
		switch {
		case pc.aborted.Load():
			nerr = pc.fail(err)
		case writeFailed(err):
			pc.fail(err)
			nerr = &NodeError{Node: pc.p.c.nodes.get(pc.p.node).node, Err: errtext.Errorf("%w: %w", errNotWritten, err)}
			if written < len(batch) {
				// The command cut short goes to the reader too: a
				// server that refuses it (a value over its
				// proto-max-bulk-len) sends its protocol error before
				// it resets the connection, and that refusal is its
				// result; otherwise it did not run (readCut).
				batch[written].unwritten = nerr
				toReader++
			}
		default:
			// The connection had failed before this write: its reader
			// failed it on a read (and noted that), or closed it after a
			// protocol error reply (the command's fault, no failure of the
			// node). The pool's connection refuses a Send once failed, so
			// the command being queued was not written, nor those after it.
			// (A Flush refused so leaves nothing here: the last command,
			// perhaps written whole by its Send, went to the reader.)
			pc.broken.Store(true)
			nerr = &NodeError{Node: pc.p.c.nodes.get(pc.p.node).node, Err: errtext.Errorf("%w: %w", errNotWritten, err)}
		}
	}
	// The replies are due a read timeout after the batch is written, as
	// on a connection of one's own (where the read timeout starts after
	// the flush): a write the server was slow to take (a large value, a
	// stalled server) within the write timeout does not eat the wait for
	// the reply. The reader gets the commands written only now, so that
	// it never reads a sent time being set.
	now := time.Now()
	pc.outstanding.Add(int32(toReader))
	for _, r := range batch[:toReader] {
		r.sent = now
		pc.inflight <- r
	}
	if err == nil {
		return true
	}
	for _, r := range batch[toReader:] {
		r.finish(nil, nerr)
	}
	return false
}

// readCut gives r, the command that a failed write cut short, its
// result: the server's refusal when it sent a protocol error for it (or
// for the command of a transaction written before it, r.pre) before it
// reset the connection, and otherwise r.unwritten, which says that it did
// not run. The replies before the reset are readable, and then the
// reset, at once (pool/liveconn.go). failed is the connection's failure
// on a read before r: nothing more is read then.
func (pc *pipeConn) readCut(r *pipeReq, failed error) {
	if failed == nil {
		due := r.sent.Add(pc.p.c.readTimeout)
		for range len(r.pre) + 1 {
			_, err := pool.ReceiveBy(pc.conn, due)
			var re redis.Error
			if errors.As(err, &re) && isProtocolError(re) {
				r.finish(nil, re)
				return
			}
			if err != nil && !errors.As(err, &re) {
				break
			}
		}
	}
	r.finish(nil, r.unwritten)
}

// fail marks the connection broken and returns the error its commands get.
// A failed write is no verdict on the node (Client.failSend): it counts
// as an error of the node, and the health check's PING judges the node.
func (pc *pipeConn) fail(err error) error {
	pc.broken.Store(true)
	if pc.aborted.Load() {
		return errClosedInFlight
	}
	ns := pc.p.c.nodes.get(pc.p.node)
	if writeFailed(err) {
		ns.errors.Add(1)
		ns.noteCause(err)
	} else {
		pc.p.c.noteFailure(context.Background(), pc.p.node, err)
	}
	return &NodeError{Node: ns.node, Err: err}
}

// errAfterProtocolError is the error, wrapped in a *NodeError, of a command
// written on an automatic pipeline's connection after a command that the
// server refused with a protocol error: the server closed the connection
// without running it.
var errAfterProtocolError = errors.New("shardis: not run: the server closed the connection after a protocol error in a command written before it")

// readAhead is the reply read after one that reads as a protocol error,
// to tell whether it was one: the server closes the connection after its
// protocol error (the next read finds the end of the stream, or a reset),
// while a command's own error reply that merely reads so (a script's
// redis.error_reply, a module's) is followed by the replies of the
// commands written after it, which ran.
type readAhead struct {
	reply any
	err   error
}

// readNext reads the next reply from conn, waiting up to timeout.
func readNext(conn redis.Conn, timeout time.Duration) *readAhead {
	r, err := redis.ReceiveWithTimeout(conn, timeout)
	return &readAhead{reply: r, err: err}
}

// errClosedAfterLookalike is the error, wrapped in a *NodeError with the
// connection's failure, of a command written on an automatic pipeline's
// connection after a script's (or a module's) command whose error reply
// read as a protocol error, when the server closed the connection next:
// its own protocol error, or a command's error reply followed by a kill
// of the connection (CLIENT KILL, a restart) that lost the replies of the
// commands after it, which ran. Nothing tells which: they may have run.
var errClosedAfterLookalike = errors.New("the server closed the connection after a reply that reads as a protocol error, which the command before may have sent itself (a script's or a module's error reply): the commands written after it may have run")

// mayReadAsProtocolError reports whether cl's own error reply may read as
// the server's protocol error: a script's or a function's
// (redis.error_reply), or a module's command (one the generated table
// does not know), whose text is the caller's to choose. No other command
// answers so: after one, a reply that reads as a protocol error is the
// server's own.
func mayReadAsProtocolError(cl *call) bool {
	if cl.info == nil || command.Lookup(cl.info.Name) != cl.info {
		return true
	}
	return runsScript(cl.info.Name)
}

// runsScript reports whether the command named name (lowercase) runs a
// Lua script or a function, whose error replies are the script's own
// text: any error, a look-alike of the server's, may come after some of
// its writes ran.
func runsScript(name string) bool {
	switch name {
	case "eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro":
		return true
	}
	return false
}

// isProtocolError reports a protocol error reply (a value over the
// server's proto-max-bulk-len, ...), after which the server closes the
// connection.
func isProtocolError(re redis.Error) bool {
	return strings.HasPrefix(string(re), "ERR Protocol error")
}

// errClosedInFlight is the error of a command whose reply had not come
// when Close closed its connection: it may or may not have run.
var errClosedInFlight = fmt.Errorf("%w before the reply came (the command may have run)", ErrClosed)

// settle counts one reply in, once the reader is done with the
// connection for it, and with a MaxActive cap tells the writer when none
// is outstanding any more.
func (pc *pipeConn) settle() {
	if pc.outstanding.Add(-1) == 0 && pc.drained != nil {
		select {
		case pc.drained <- struct{}{}:
		default:
		}
	}
}

// release finishes a connection with no reply outstanding and waits until
// its reader has handed it back to the pool, so that the next borrow of a
// capped pool finds it there.
func (pc *pipeConn) release() {
	pc.finish()
	<-pc.exited
}

// done ends the writer's use of the connection: with a capped pool it
// waits until the connection is back in the pool (release), because the
// next batch borrows at once and a pool without Wait would refuse it
// while the reader still holds this one (an idle check on a loaded
// machine did exactly that); without a cap it does not wait (finish).
func (pc *pipeConn) done(capped bool) {
	if capped {
		pc.release()
		return
	}
	pc.finish()
}

// finish tells the reader that nothing more will be sent; the reader
// returns the connection once every reply is in.
func (pc *pipeConn) finish() { close(pc.inflight) }

// read receives the replies of the commands sent, in order, until the
// writer finishes with the connection. After a connection failure every
// command still waiting gets the error.
func (pc *pipeConn) read() {
	defer pc.p.readers.Done()
	var (
		// suspect: the last reply read as a protocol error (readAhead),
		// and the next one read tells whether it was one. mimicked: that
		// reply's command may have sent it itself (pipeReq.mimics).
		// discard: the connection is not to go back to the pool.
		suspect, mimicked, discard bool
	)
	defer func() {
		pc.p.mu.Lock()
		delete(pc.p.conns, pc)
		pc.p.mu.Unlock()
		if discard {
			// Its last reply read as a protocol error, and nothing
			// read after it told otherwise: the server may be about
			// to close it, and the pool's borrow check would not see
			// that yet.
			pc.abort()
		}
		pc.conn.Close()
		close(pc.exited)
	}()
	var (
		failed  error
		refused bool // NOAUTH or WRONGPASS since the last success noted
		// a reply since then that proves the node serves (replyProves)
		answered bool
		// LOADING or MASTERDOWN since then: a failure of the node
		// (noteUnserving), not a success
		unserving error
	)
	for r := range pc.inflight {
		if r.unwritten != nil {
			// The last command on the connection: the write failed in it.
			pc.readCut(r, failed)
			pc.settle()
			continue
		}
		if failed != nil {
			r.finish(nil, failed)
			pc.settle()
			continue
		}
		// Each command's reply is due a read timeout after it was sent,
		// however long the replies before it took. One already received
		// is still taken when that time has passed (and costs no clock
		// read).
		due := r.sent.Add(pc.p.c.readTimeout)
		var reply any
		dropped, preRefused, got, err := skipReplies(pc.conn, len(r.pre), due)
		r.refused = preRefused
		preProto := false // a protocol error before EXEC
		switch {
		case err == nil && dropped != "" && isProtocolError(dropped):
			// A transaction's command refused with a protocol error:
			// the server closes the connection, EXEC never comes, and
			// the refusal is the transaction's answer.
			err, preProto = dropped, true
		case err == nil:
			reply, err = pool.ReceiveBy(pc.conn, due)
		}
		if suspect {
			// The first read since a reply that read as a protocol
			// error: the end of the stream (or a reset) confirms it.
			// The server ran nothing written after that command: r
			// and the commands after it fail unrun, which is no
			// failure of the node. Any reply instead shows that the
			// server kept the connection open and ran r: that reply
			// was the command's own error reply (a script's
			// redis.error_reply, a module's), and r's is read as
			// usual.
			// After a script's (or a module's) command, though, the
			// end of the stream does not tell: the server may have
			// sent that reply for the command, run those after it and
			// then lost their replies with the connection (CLIENT
			// KILL, a restart). They may have run, and fail with the
			// connection's failure (errClosedAfterLookalike), which
			// says so, never as unrun (the cluster client would send
			// a write again). Not the node's failure either way.
			suspect = false
			if got == 0 && err != nil && serverClosed(err) {
				cause := errAfterProtocolError
				if mimicked {
					cause = errtext.Errorf("%w: %w", errClosedAfterLookalike, err)
				}
				failed = &NodeError{Node: pc.p.c.nodes.get(pc.p.node).node, Err: cause}
				pc.settle()
				r.finish(nil, failed)
				continue
			}
			discard = false
		}
		if dropped != "" && unserving == nil && cannotServe(dropped) {
			unserving = dropped // the cause of EXEC's EXECABORT
		}
		// Each reply is counted in (settle) before its caller wakes: a
		// caller's next command then finds no reply outstanding on a
		// connection that sits idle, and the writer looks at it.
		var re redis.Error
		switch {
		case err == nil:
			pc.settle()
			answered = answered || r.proves
			r.finish(reply, nil)
		case preProto:
			// A transaction's command refused with a protocol error
			// before its EXEC: a queued command does not run, so the
			// reply is the server's own, it closes the connection, and
			// runs nothing sent after the command: the writer moves to
			// a new connection (broken is set before the caller wakes,
			// so that its next command is not written on this one),
			// and the commands already written after it fail unrun.
			// Not the node's failure: the command was at fault. The
			// connection is closed here, not handed back to the pool:
			// the server's close may come well after its reply, and
			// until it does the pool's borrow check finds nothing wrong
			// and would lend the connection for a command that the
			// server never reads.
			pc.broken.Store(true)
			pc.abort()
			failed = &NodeError{Node: pc.p.c.nodes.get(pc.p.node).node, Err: errAfterProtocolError}
			pc.settle()
			r.finish(nil, dropped)
			continue
		case errors.As(err, &re) && isProtocolError(re):
			// The reply of a command that ran may read so too (a
			// script's redis.error_reply): the server then keeps the
			// connection open and runs the commands written after it.
			// The text alone does not tell, so the next read does
			// (suspect): a protocol error is the last reply the server
			// sends on the connection. Meanwhile the writer moves to a
			// new connection (broken is set before the caller wakes, so
			// that its next command is not written on this one), and
			// this one is not handed back to the pool unless a reply
			// after this one shows it open (discard).
			pc.broken.Store(true)
			suspect, mimicked, discard = true, r.mimics, true
			pc.settle()
			r.finish(nil, re)
			continue
		case errors.As(err, &re):
			pc.settle()
			rerr, no := pc.p.c.replyError(pc.p.node, hideSecretEcho(r.cl.name, r.cl.args, re)) // secret_echo.go
			refused = refused || no
			if unserving == nil && cannotServe(re) {
				unserving = re
			}
			answered = answered || (r.proves && !busyScript(re))
			r.finish(nil, rerr)
		default:
			failed = pc.fail(err)
			pc.settle()
			r.finish(nil, failed)
			continue
		}
		if len(pc.inflight) == 0 {
			switch {
			case unserving != nil:
				pc.p.c.noteUnserving(pc.p.node, unserving)
			case answered && !refused:
				pc.p.c.noteSuccess(pc.p.node)
			}
			refused, unserving, answered = false, nil, false
		}
	}
}
