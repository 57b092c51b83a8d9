package shard

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gomodule/redigo/redis"
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
// next batch.
const pipeIdleCheck = 100 * time.Millisecond

// autoQueue is how many commands may wait for the writer, and how many
// may wait for their replies on one connection, before callers wait.
const autoQueue = 4096

// pipeReq is one command waiting in an automatic pipeline.
type pipeReq struct {
	cl    *call // read by the writer only: the caller may give up on it
	reply any
	err   error
	done  chan struct{} // receives once reply and err are set
}

var pipeReqs = sync.Pool{New: func() any { return &pipeReq{done: make(chan struct{}, 1)} }}

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
	p := &autoPipe{c: c, node: node, reqs: make(chan *pipeReq, autoWaiting), dead: make(chan struct{})}
	next[node] = p
	c.autoPipes.pipes.Store(&next)
	c.bg.Add(1)
	go p.write()
	return p
}

// pipeable reports whether a call may share a connection with other
// callers' commands: a command on keys that neither blocks, nor changes
// the connection's state (WATCH, MULTI, SUBSCRIBE, ...), nor follows an
// ASK redirect (ASKING must come right before it on its connection).
func pipeable(cl *call) bool {
	if cl.asking || cl.info == nil {
		return false
	}
	info := cl.info.Resolve(cl.args)
	return info.HasKeys() && info.Flags&(command.Blocking|command.PubSub|command.NoMulti) == 0
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
	return c.autoRoundTrip(ctx, p, cl)
}

// autoRoundTrip sends one call through its node's automatic pipeline p
// and waits for the result. It reports whether the context ended first, in
// which case the pipeline still owns the call.
func (c *Client) autoRoundTrip(ctx context.Context, p *autoPipe, cl *call) (abandoned bool) {
	ns := c.nodes.get(cl.node)
	ns.commands.Add(1)
	if ns.down.Load() {
		ns.errors.Add(1)
		cl.err = &NodeError{Node: ns.node, Err: ErrNodeDown}
		return false
	}
	r := pipeReqs.Get().(*pipeReq)
	r.cl = cl
	select {
	case p.reqs <- r:
	case <-p.dead:
		r.cl = nil
		pipeReqs.Put(r)
		cl.err = ErrClosed
		return false
	case <-ctx.Done():
		r.cl = nil
		pipeReqs.Put(r)
		cl.err = fmt.Errorf("shardis: %w", ctx.Err())
		return false
	}
	select {
	case <-r.done:
		cl.reply, cl.err = r.reply, r.err
	case <-p.dead:
		select {
		case <-r.done: // it was answered before the pipeline stopped
			cl.reply, cl.err = r.reply, r.err
		default:
			cl.err = ErrClosed // still queued: never sent
			return true        // the channel may still hold r
		}
	case <-ctx.Done():
		// The reply will come and be dropped; r stays with the pipeline.
		cl.reply, cl.err = nil, fmt.Errorf("shardis: %w", ctx.Err())
		return true
	}
	r.cl, r.reply, r.err = nil, nil, nil
	pipeReqs.Put(r)
	return false
}

// finish stores a command's result and wakes its caller.
func (r *pipeReq) finish(reply any, err error) {
	r.reply, r.err = reply, err
	r.done <- struct{}{}
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
	)
	defer func() {
		if conn != nil {
			conn.finish()
		}
		p.readers.Wait()
		close(p.dead)
	}()
	idle := time.NewTimer(pipeIdleCheck)
	idle.Stop()
	for {
		batch = batch[:0]
		r, stop := p.await(conn != nil, closed, idle)
		if stop {
			p.failQueued()
			return
		}
		if r == nil { // idle: hand the connection back (autopipe_idle.go)
			conn.finish()
			conn = nil
			continue
		}
		batch = append(batch, r)
		batch = p.drain(batch)
		if len(batch) < maxAutoBatch && len(p.reqs) == 0 {
			// Let callers that are about to send run first: one more
			// command in this write saves a system call on both sides.
			runtime.Gosched()
			batch = p.drain(batch)
		}
		if conn != nil && (conn.broken.Load() || time.Since(conn.lastFlush) > pipeIdleCheck) {
			// A broken connection is replaced; an idle one is handed back
			// and borrowed afresh, so that the pool's check catches a
			// connection the server closed meanwhile (a restart, its idle
			// timeout) before a write is sent on it.
			conn.finish()
			conn = nil
		}
		if conn == nil {
			var err error
			if conn, err = p.connect(); err != nil {
				for _, r := range batch {
					r.finish(nil, err)
				}
				continue
			}
		}
		if !conn.send(batch) {
			conn.finish()
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
			r.finish(nil, ErrClosed)
		default:
			return
		}
	}
}

// connect borrows a connection for the pipeline and starts its reader.
func (p *autoPipe) connect() (*pipeConn, error) {
	ns := p.c.nodes.get(p.node)
	conn, err := p.c.conn(context.Background(), ns, nil)
	if err != nil {
		p.c.noteFailure(context.Background(), p.node, err)
		return nil, &NodeError{Node: ns.node, Err: err}
	}
	pc := &pipeConn{p: p, conn: conn, inflight: make(chan *pipeReq, autoQueue), lastFlush: time.Now()}
	p.readers.Add(1)
	go pc.read()
	return pc, nil
}

// pipeConn is one connection of an automatic pipeline: the writer sends
// on it, its reader receives. Once either side fails the connection is
// broken and the writer moves on to a new one.
type pipeConn struct {
	p        *autoPipe
	conn     redis.Conn
	inflight chan *pipeReq // sent, waiting for replies, in order
	broken   atomic.Bool
	// lastFlush is when the writer last sent on the connection.
	lastFlush time.Time
}

// send writes a batch and flushes it. It reports false when the
// connection failed: the commands written so far get the error from the
// reader, the others get it here.
func (pc *pipeConn) send(batch []*pipeReq) bool {
	var err error
	i := 0
	for ; i < len(batch); i++ {
		cl := batch[i].cl
		if err = pc.conn.Send(cl.name, cl.args...); err != nil {
			break
		}
		pc.inflight <- batch[i]
	}
	if err == nil {
		err = pc.conn.Flush()
	}
	if err == nil {
		pc.lastFlush = time.Now()
		return true
	}
	nerr := pc.fail(err)
	for _, r := range batch[i:] {
		r.finish(nil, nerr)
	}
	return false
}

// fail marks the connection broken and returns the error its commands get.
func (pc *pipeConn) fail(err error) error {
	pc.broken.Store(true)
	pc.p.c.noteFailure(context.Background(), pc.p.node, err)
	return &NodeError{Node: pc.p.c.nodes.get(pc.p.node).node, Err: err}
}

// finish tells the reader that nothing more will be sent; the reader
// returns the connection once every reply is in.
func (pc *pipeConn) finish() { close(pc.inflight) }

// read receives the replies of the commands sent, in order, until the
// writer finishes with the connection. After a connection failure every
// command still waiting gets the error.
func (pc *pipeConn) read() {
	defer pc.p.readers.Done()
	defer pc.conn.Close()
	var failed error
	for r := range pc.inflight {
		if failed != nil {
			r.finish(nil, failed)
			continue
		}
		reply, err := redis.ReceiveWithTimeout(pc.conn, pc.p.c.readTimeout)
		var re redis.Error
		switch {
		case err == nil:
			r.finish(reply, nil)
		case errors.As(err, &re):
			r.finish(nil, re)
		default:
			failed = pc.fail(err)
			r.finish(nil, failed)
			continue
		}
		if len(pc.inflight) == 0 {
			pc.p.c.noteSuccess(pc.p.node)
		}
	}
}
