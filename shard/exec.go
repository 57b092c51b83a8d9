package shard

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/dialedaddr"
	"github.com/shardis/shardis/internal/errtext"
	"github.com/shardis/shardis/pool"
)

// execute runs calls and, in cluster mode, follows redirects and retries
// until each call has its final result.
//
// It reports whether it returned while per-node workers were still
// running (the context ended first): those workers may still read the
// calls, so the caller must not reuse them.
func (c *Client) execute(ctx context.Context, calls []*call) (abandoned bool) {
	fp, _ := c.planFence() // calls addressed to nodes: counted as the fence requires (migrate_plan.go)
	return c.runPlanned(ctx, calls, fp)
}

// executeIn is execute for calls planned in migration m (nil: none, or
// planned by the old topology, which moves nothing), under the retry and
// redirect rules of cluster r (nil: none; migrate_cluster.go).
func (c *Client) executeIn(ctx context.Context, m *migState, r *ClusterRouter, calls []*call) (abandoned bool) {
	var ow overwrite
	ow.srcIdx = -1
	if m != nil {
		// Keys whose owner changes go there first, or a read is answered
		// where its keys still are, or an overwrite replaces the key at its
		// new owner and then deletes the old copy (migrate_exec.go,
		// migrate_read.go, migrate_overwrite.go).
		if calls = c.moveFirst(ctx, m, calls, true, &ow); len(calls) == 0 {
			return false
		}
	}
	abandoned = c.runHooked(ctx, calls)
	if r != nil && !abandoned {
		abandoned = c.retryCluster(ctx, calls)
	}
	if c.sent != nil && !abandoned {
		abandoned = c.retrySentinel(ctx, calls)
	}
	if r == nil && c.sent == nil && !abandoned {
		markUnknownOutcomes(calls)
	}
	if ow.srcIdx >= 0 {
		if !abandoned {
			if h := testHookOverwritten.Load(); h != nil {
				(*h)(c)
			}
			c.dropOld(ctx, m, ow, calls[0])
		}
		c.endOverwrite(m, abandoned)
	}
	return abandoned
}

// markUnknownOutcomes gives a write whose connection failed after it was
// sent the *UnknownOutcomeError that cluster and Sentinel mode give it
// (their retry rules do it there): a ring shard's I/O error or timeout
// then reads the same in every mode. A failure before sending (a refused
// dial or login, a node marked down) and one the caller's context caused
// stay as they are.
func markUnknownOutcomes(calls []*call) {
	for _, cl := range calls {
		markUnknownOutcome(cl)
	}
}

// markUnknownOutcome is markUnknownOutcomes for one call.
func markUnknownOutcome(cl *call) {
	if ne, ok := failedAfterSend(cl); ok {
		cl.err = &UnknownOutcomeError{Command: strings.ToUpper(cl.name), Node: ne.Node, Err: cl.err}
	}
}

// failedAfterSend reports whether cl is a write whose node's connection
// failed after it was sent (in ring mode; see markUnknownOutcomes), and
// the node's error. A command written after one the server refused with
// a protocol error did not run: the server closed the connection without
// reading it.
func failedAfterSend(cl *call) (*NodeError, bool) {
	if cl.err == nil || !mayWrite(cl.info) {
		return nil, false
	}
	var ne *NodeError
	if !errors.As(cl.err, &ne) || notSent(ne.Err) || errors.Is(ne.Err, redis.ErrPoolExhausted) ||
		errors.Is(ne.Err, errAfterProtocolError) || // the server closed the connection before it: not run
		errors.Is(cl.err, context.Canceled) || errors.Is(cl.err, context.DeadlineExceeded) {
		return nil, false
	}
	var uo *UnknownOutcomeError
	var me *MigrateError // says itself whether the command was sent
	if errors.As(cl.err, &uo) || errors.As(cl.err, &me) {
		return nil, false
	}
	return ne, true
}

// run sends every routed call (node >= 0, err == nil) to its node and
// stores each reply or error in the call. Calls for one node go out as one
// pipeline on one connection, and every node's pipeline is written before
// any reply is read, so the nodes work at the same time. A failure of one
// node touches only that node's calls.
//
// Everything runs on the caller's goroutine: no goroutine, no channel,
// and the replies of the nodes are read one node after the other (they
// have been arriving meanwhile). With a context that can end early, a
// canceller closes the connection being written or read when the context
// ends, so the call returns at once; the replies other nodes have already
// sent are still collected (runWatched). Only a batch of thousands of
// commands on a machine with cores to spare decodes each node's replies on
// a goroutine of its own (runParallel).
func (c *Client) run(ctx context.Context, calls []*call) (abandoned bool) {
	if hasStateful(calls) {
		return c.runStateful(ctx, calls) // connstate.go
	}
	if c.autoPipe && len(calls) == 1 && calls[0].err == nil && calls[0].node >= 0 && pipeable(calls[0]) {
		return c.autoDo(ctx, calls)
	}
	return c.runPooled(ctx, calls)
}

// runPooled is run on pooled connections.
func (c *Client) runPooled(ctx context.Context, calls []*call) (abandoned bool) {
	if len(calls) >= parallelDecodeMin && runtime.GOMAXPROCS(0) >= 4 {
		return c.runParallel(ctx, calls)
	}
	first, single, skipped := -1, true, false
	for _, cl := range calls {
		if cl.err != nil || cl.node < 0 {
			skipped = true
			continue
		}
		if first < 0 {
			first = cl.node
		} else if cl.node != first {
			single = false
			break
		}
	}
	if first < 0 {
		return false
	}
	if single {
		if skipped {
			// Calls that already failed (a key that could not be moved
			// first, migrate_exec.go) are sent nowhere: not to the node
			// of the others.
			calls = sendable(calls)
		}
		// A context that can end early gets a canceller: it closes the
		// connection the moment the context ends, so that the caller's
		// read returns at once without a goroutine of its own.
		var k *canceller
		if ctx.Done() != nil {
			k = newCanceller(ctx)
			defer k.finish()
		}
		if conn := c.send(ctx, first, calls, nil, k); conn != nil {
			c.receive(ctx, first, conn, calls, nil)
			k.finish() // before the connection goes back to the pool
			conn.Close()
		}
		return false
	}
	if ctx.Done() != nil {
		c.runWatched(ctx, calls, false)
		return false
	}
	gs := groupings.Get().(*grouping)
	defer gs.release()
	groups := gs.build(calls)
	for i := range groups {
		g := &groups[i]
		gs.conns = append(gs.conns, c.send(ctx, g.node, g.calls, nil, nil))
	}
	for i := range groups {
		g := &groups[i]
		if conn := gs.conns[i]; conn != nil {
			c.receive(ctx, g.node, conn, g.calls, nil)
			conn.Close()
		}
	}
	return false
}

// sendable returns the calls of a batch that are routed and have not
// failed.
func sendable(calls []*call) []*call {
	out := make([]*call, 0, len(calls))
	for _, cl := range calls {
		if cl.err == nil && cl.node >= 0 {
			out = append(out, cl)
		}
	}
	return out
}

// runWatched runs a batch for several nodes under a context that can end
// early, on the caller's goroutine. A canceller watches only the
// connection being written or read: when the context ends, that one is
// closed, so the call returns at once, and the replies that the other
// nodes have already sent are still collected (harvest). A node that
// answered in time keeps its results; one that did not fails with the
// context's error. With closeStateful, the connection of a node that ran
// a state-changing call is closed instead of going back to the pool.
func (c *Client) runWatched(ctx context.Context, calls []*call, closeStateful bool) {
	gs := groupings.Get().(*grouping)
	defer gs.release()
	groups := gs.build(calls)
	k := newCanceller(ctx)
	defer k.finish()
	for i := range groups {
		g := &groups[i]
		conn := c.send(ctx, g.node, g.calls, nil, k)
		gs.conns = append(gs.conns, conn)
		gs.aborts = append(gs.aborts, k.takeAll())
	}
	for i := range groups {
		g, conn := &groups[i], gs.conns[i]
		if conn == nil {
			continue
		}
		abort := gs.aborts[i]
		if !ended(ctx) {
			k.add(abort)
			c.receive(ctx, g.node, conn, g.calls, nil)
			k.takeAll()
			if closeStateful && hasStateful(g.calls) && abort != nil {
				abort() // the pool never hands it out again
			}
		} else {
			c.harvest(ctx, conn, g.calls)
			abort() // replies may be left unread: never reuse it
		}
		conn.Close()
	}
}

// harvestWait is how long harvest waits for a reply: long enough for
// bytes already on their way, far too short for a server to do work.
// harvestBudget bounds a node's whole harvest, however its replies trickle.
const (
	harvestWait   = time.Millisecond
	harvestBudget = 5 * time.Millisecond
)

// harvest collects, after the context ended, the replies of calls that
// the node has already sent, in order; from the first one that has not
// arrived (or once harvestBudget is spent), the calls fail with the
// context's error. An error reply is the call's own, as receive makes it
// (replyError).
func (c *Client) harvest(ctx context.Context, conn redis.Conn, calls []*call) {
	failFrom := func(i int) {
		cerr := fmt.Errorf("shardis: %w", context.DeadlineExceeded)
		if ctx.Err() != nil {
			cerr = fmt.Errorf("shardis: %w", ctx.Err())
		}
		for _, rest := range calls[i:] {
			rest.reply, rest.err = nil, cerr
		}
	}
	start := time.Now()
	for i, cl := range calls {
		if time.Since(start) >= harvestBudget {
			failFrom(i)
			return
		}
		reply, err := redis.ReceiveWithTimeout(conn, harvestWait)
		if cl.asking && (err == nil || isRedisError(err)) {
			// That was ASKING's reply; the command's own comes next.
			reply, err = redis.ReceiveWithTimeout(conn, harvestWait)
		}
		if err != nil && !isRedisError(err) {
			failFrom(i)
			return
		}
		if re, ok := err.(redis.Error); ok {
			// As receive has it: a NOAUTH or WRONGPASS is an
			// authentication failure (but for the caller's own AUTH or
			// HELLO), a secret echoed back is hidden.
			err = c.commandReplyError(cl.node, cl.name, cl.args, re)
		}
		cl.reply, cl.err = reply, err
	}
}

// ended reports whether ctx is done or its deadline has passed (a socket
// deadline set from it can fire a moment before the context's own timer).
func ended(ctx context.Context) bool {
	if ctx.Err() != nil {
		return true
	}
	dl, ok := ctx.Deadline()
	return ok && !time.Now().Before(dl)
}

// isRedisError reports whether err is a server's error reply.
func isRedisError(err error) bool {
	_, ok := err.(redis.Error)
	return ok
}

// grouping splits a batch by node, like groups, into buffers that are
// kept for the next batch: it serves the batches that run on the
// caller's goroutine.
type grouping struct {
	byNode []int32 // node -> 1 + its index in list; 0 for none yet
	list   []group
	conns  []redis.Conn
	aborts []func() // runWatched: each connection's abort
}

var groupings = sync.Pool{New: func() any { return new(grouping) }}

// build groups the routed calls by node, in order of first appearance.
func (gs *grouping) build(calls []*call) []group {
	for _, cl := range calls {
		if cl.err != nil || cl.node < 0 {
			continue
		}
		for cl.node >= len(gs.byNode) {
			gs.byNode = append(gs.byNode, 0)
		}
		i := gs.byNode[cl.node]
		if i == 0 {
			if n := len(gs.list); n < cap(gs.list) {
				gs.list = gs.list[:n+1]
				gs.list[n].node, gs.list[n].calls = cl.node, gs.list[n].calls[:0]
			} else {
				gs.list = append(gs.list, group{node: cl.node})
			}
			i = int32(len(gs.list))
			gs.byNode[cl.node] = i
		}
		g := &gs.list[i-1]
		g.calls = append(g.calls, cl)
	}
	return gs.list
}

// release empties gs, drops what it refers to and recycles it.
func (gs *grouping) release() {
	for i := range gs.list {
		gs.byNode[gs.list[i].node] = 0
		clear(gs.list[i].calls)
	}
	gs.list = gs.list[:0]
	clear(gs.conns)
	gs.conns = gs.conns[:0]
	clear(gs.aborts)
	gs.aborts = gs.aborts[:0]
	groupings.Put(gs)
}

// canceller closes the connections of a batch when its context ends, so
// that blocked reads and writes return at once: the caller's goroutine
// does all the work and still returns promptly, without a goroutine per
// node. A closed connection is never reused (see pool.GetAbortable).
type canceller struct {
	stop   func() bool
	mu     sync.Mutex
	aborts []func()
	fired  bool // the context ended: connections added later are closed at once
	done   bool // the batch is over: nothing more may be closed
}

func newCanceller(ctx context.Context) *canceller {
	k := &canceller{}
	k.stop = context.AfterFunc(ctx, k.fire)
	return k
}

// add registers the abort function of a connection the batch holds.
func (k *canceller) add(abort func()) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.fired && !k.done {
		abort()
		return
	}
	k.aborts = append(k.aborts, abort)
}

// takeAll unregisters the connections added so far and returns the abort
// function of the last one (nil if none): the caller registers it again
// (add) when it next waits on that connection.
func (k *canceller) takeAll() func() {
	k.mu.Lock()
	defer k.mu.Unlock()
	var last func()
	if n := len(k.aborts); n > 0 {
		last = k.aborts[n-1]
	}
	clear(k.aborts)
	k.aborts = k.aborts[:0]
	return last
}

func (k *canceller) fire() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.done {
		return
	}
	k.fired = true
	for _, abort := range k.aborts {
		abort()
	}
}

// finish ends the canceller's watch; it must be called before the
// batch's connections go back to the pool. Calling it again, or on a nil
// canceller, does nothing.
func (k *canceller) finish() {
	if k == nil {
		return
	}
	k.stop()
	k.mu.Lock()
	k.done = true
	k.aborts = nil
	k.mu.Unlock()
}

// parallelDecodeMin is the batch size from which replies are decoded on
// several goroutines when the machine has the cores for it.
const parallelDecodeMin = 4096

// group is the share of a batch that goes to one node. A worker owns its
// results until it hands the group back on the done channel.
type group struct {
	node    int
	calls   []*call
	results []Result
}

// groups splits the routed calls by node, in order of first appearance,
// into groups of their own (not recycled: runParallel's workers may
// outlive the call).
func (c *Client) groups(calls []*call) []*group {
	list := new(grouping).build(calls)
	out := make([]*group, len(list))
	for i := range list {
		out[i] = &list[i]
	}
	return out
}

// runParallel runs a large batch with a worker per node, each decoding
// its node's replies. Each worker closes its connection when ctx ends
// (a canceller of its own), so that, once ctx has ended, the workers
// return at once with what their nodes had answered and the context's
// error for the rest, and the call returns when they have: nothing of the
// batch outlives it. Only a worker that still has not returned after
// parallelStopWait is left behind (abandoned), its calls failed with the
// context's error.
func (c *Client) runParallel(ctx context.Context, calls []*call) (abandoned bool) {
	order := c.groups(calls)
	done := make(chan *group, len(order))
	for _, g := range order {
		g.results = make([]Result, len(g.calls))
		// Started under the client's life lock (goTracked): Close waits
		// for these workers, and must not wait while one is being added.
		if !c.goTracked(&c.inflight, func() {
			c.roundTrip(ctx, g.node, g.calls, g.results)
			done <- g
		}) {
			for i := range g.results { // Close came first: nothing sent
				g.results[i].Err = ErrClosed
			}
			done <- g
		}
	}
	finished := make(map[*group]bool, len(order))
	ctxDone := ctx.Done()
	var cut <-chan time.Time
	for len(finished) < len(order) {
		select {
		case g := <-done:
			finished[g] = true
			for i, cl := range g.calls {
				cl.reply, cl.err = g.results[i].Reply, g.results[i].Err
			}
		case <-ctxDone:
			// The workers' cancellers are closing their connections:
			// wait for them to return, but not for ever.
			ctxDone = nil
			t := time.NewTimer(parallelStopWait)
			defer t.Stop()
			cut = t.C
		case <-cut:
			err := fmt.Errorf("shardis: %w", ctx.Err())
			for _, g := range order {
				if !finished[g] {
					for _, cl := range g.calls {
						cl.reply, cl.err = nil, err
					}
				}
			}
			return true
		}
	}
	return false
}

// parallelStopWait bounds how long runParallel waits, once its context
// has ended, for workers whose connections were closed to return.
const parallelStopWait = time.Second

// roundTrip sends calls to node over one connection and reads the replies.
// With out == nil the results go straight into the calls; otherwise into
// out, which the caller copies later. A context that can end early gets a
// canceller: its end closes the connection, so that the wait ends then.
func (c *Client) roundTrip(ctx context.Context, node int, calls []*call, out []Result) {
	var k *canceller
	if ctx.Done() != nil {
		k = newCanceller(ctx)
		defer k.finish()
	}
	if conn := c.send(ctx, node, calls, out, k); conn != nil {
		c.receive(ctx, node, conn, calls, out)
		k.finish() // before the connection goes back to the pool
		conn.Close()
	}
}

// setResult stores result i of a group: in out when it is given, else in
// the call itself.
func setResult(calls []*call, out []Result, i int, reply any, err error) {
	if out == nil {
		calls[i].reply, calls[i].err = reply, err
	} else {
		out[i] = Result{Reply: reply, Err: err}
	}
}

// failFrom fails calls[start:] with a *NodeError for node.
func (c *Client) failFrom(node int, calls []*call, out []Result, start int, err error) {
	nerr := &NodeError{Node: c.nodes.get(node).node, Err: err}
	for i := start; i < len(calls); i++ {
		setResult(calls, out, i, nil, nerr)
	}
}

// send borrows a connection to node, writes calls (with ASKING in front
// of those that need it) and flushes. On failure it fails every call and
// returns nil; otherwise the caller reads the replies and closes the
// connection. With a canceller, the connection is registered with it.
func (c *Client) send(ctx context.Context, node int, calls []*call, out []Result, k *canceller) redis.Conn {
	ns := c.nodes.get(node)
	ns.commands.Add(int64(len(calls)))
	if ns.down.Load() {
		ns.errors.Add(int64(len(calls)))
		c.failFrom(node, calls, out, 0, ns.downErr())
		return nil
	}
	sentinel := c.sent != nil && strings.HasPrefix(ns.node.Addr, sentinelPrefix)
	if sentinel {
		for _, cl := range calls {
			cl.server = ""
		}
	}
	conn, err := c.conn(ctx, ns, k)
	if err != nil {
		c.noteFailure(ctx, node, err)
		c.failFrom(node, calls, out, 0, err)
		return nil
	}
	if sentinel {
		// The master its connection went to, which the hooks name even
		// once the shard has another (serverAddr names the current one).
		server := dialedaddr.Of(conn)
		for _, cl := range calls {
			cl.server = server
		}
	}
	for _, cl := range calls {
		if cl.cut != nil && cl.cut.Load() {
			// A migration's switch came while the calls waited for the
			// connection: their keys may have moved (migrate_plan.go).
			conn.Close()
			for i := range calls {
				setResult(calls, out, i, nil, errCutBeforeWrite)
			}
			return nil
		}
	}
	last := len(calls) - 1 // the call whose command a failed write was the last of
	for i, cl := range calls {
		if cl.asking {
			err = conn.Send("ASKING")
		}
		if err == nil {
			err = conn.Send(cl.name, cl.args...)
		}
		if err != nil {
			last = i
			break
		}
	}
	if err == nil {
		err = conn.Flush()
	}
	if err != nil {
		// The command the write cut short is read too: the server's
		// refusal of it may be there (readWritten).
		read := c.readWritten(node, conn, calls[:last+1], out, err)
		conn.Close()
		if out != nil {
			out = out[read:]
		}
		c.failSend(ctx, node, calls[read:], out, max(last-read, 0), err)
		return nil
	}
	return conn
}

// errNotWritten is the error, wrapped in a *NodeError with the write's
// own error, of a command that did not run because the connection failed
// before the command was completely written (or before it was written at
// all): the server never read it whole.
var errNotWritten = errors.New("shardis: not run: the connection failed before the command was completely written")

// readWritten reads the replies of calls, the commands handed to a write
// that failed with err, the last of them the one the write cut short,
// and returns how many got their result. A server that resets the
// connection while a command is being written (a value over its
// proto-max-bulk-len, refused as soon as its length is read) has
// answered those before it, and sent its refusal of that command, a
// protocol error, before the reset: the pool's connection keeps them
// readable after a write the server reset, and returns them, then the
// reset, at once (pool/liveconn.go). A command refused with a protocol
// error gets that reply (the server's refusal: it did not run), and those
// after it did not run. The command cut short gets no other reply: the
// server never read it whole. Reading stops at the first failure: the
// calls from there keep the write's error (failSend). Any other write
// failure closed the connection: nothing is read. Nothing here is a
// verdict on the node, as in failSend.
func (c *Client) readWritten(node int, conn redis.Conn, calls []*call, out []Result, err error) int {
	if len(calls) == 0 || !writeFailed(err) {
		return 0
	}
	cut := len(calls) - 1
	for i, cl := range calls {
		if cl.asking {
			if _, err := redis.ReceiveWithTimeout(conn, c.readTimeout); err != nil {
				if _, ok := err.(redis.Error); !ok {
					return i
				}
			}
		}
		reply, err := redis.ReceiveWithTimeout(conn, c.readTimeout)
		var re redis.Error
		switch {
		case errors.As(err, &re) && isProtocolError(re) && (i == cut || !mayReadAsProtocolError(cl)):
			// The server's refusal: nothing after it ran. Not so
			// surely after a script's (or a module's) command written
			// whole, which may have sent that reply itself, the reset
			// after it a kill that lost the replies of calls after it
			// that ran: that reply is read as the command's own error
			// reply (below), and what follows tells (after the reset,
			// the calls from there keep the write's error).
			setResult(calls, out, i, nil, re)
			c.failFrom(node, calls, out, i+1, errAfterProtocolError)
			return len(calls)
		case i == cut:
			return i // not refused: it keeps the write's error, not run
		case err == nil:
			setResult(calls, out, i, reply, nil)
		case errors.As(err, &re):
			setResult(calls, out, i, nil, c.commandReplyError(node, cl.name, cl.args, re))
		default:
			return i
		}
	}
	return len(calls)
}

// failSend fails the calls of a batch whose sending failed with err, on
// the command of calls[last] (or its ASKING). A failed write on the
// pool's connection stops before the end of what it was given, and what
// it was given ends with the command being queued (a Send writes its
// buffer once the command that fills it is in) or the last one queued (a
// Flush): that command was not completely written, and the commands
// after it were never written. Neither ran. The commands before it may
// have reached the server whole: those whose replies were not read
// first (readWritten) have an unknown outcome
// (markUnknownOutcomes, the cluster's and Sentinel's retry rules). Any
// other failure (a connection that had already failed, one the caller's
// context closed) proves nothing, and every call keeps it.
//
// A failed write is no verdict on the node, as a command's timeout is
// not (noteFailure): a server closes a connection mid-write when the
// command is too big for it (a value over proto-max-bulk-len), and
// counted as failures such commands marked a node down that answers
// every other connection. The health check's PING judges the node.
func (c *Client) failSend(ctx context.Context, node int, calls []*call, out []Result, last int, err error) {
	cerr := contextCause(ctx, err)
	if !writeFailed(err) {
		c.noteFailure(ctx, node, cerr)
		c.failFrom(node, calls, out, 0, cerr)
		return
	}
	ns := c.nodes.get(node)
	ns.errors.Add(1)
	ns.noteCause(cerr)
	c.failFrom(node, calls[:last], out, 0, cerr)
	var rest []Result
	if out != nil {
		rest = out[last:]
	}
	c.failFrom(node, calls[last:], rest, 0, errtext.Errorf("%w: %w", errNotWritten, cerr))
}

// receive reads the replies of calls from conn. A server error reply is
// that call's own result; a connection failure fails the call it happened
// on and every later one.
func (c *Client) receive(ctx context.Context, node int, conn redis.Conn, calls []*call, out []Result) {
	timeout, err := c.replyTimeout(ctx, calls)
	if err != nil {
		// The deadline passed after the calls were sent: they may have
		// run. Only replies already received are read (a negative
		// timeout); the first missing one fails the connection, so that
		// it is neither drained past the deadline (a blocked BLPOP for
		// up to the read timeout) nor pooled with replies unread, and
		// its call and those after it say that they may have run.
		timeout = -1
	}
	refused := false     // NOAUTH or WRONGPASS: not a success of the node
	var unserving error  // LOADING or MASTERDOWN: a failure of the node (noteUnserving)
	answered := false    // a reply that proves the node serves (replyProves)
	var ahead *readAhead // the reply after one that reads as a protocol error
	recv := func() (any, error) {
		if r := ahead; r != nil {
			ahead = nil
			return r.reply, r.err
		}
		return redis.ReceiveWithTimeout(conn, timeout)
	}
	for i, cl := range calls {
		if cl.asking {
			if _, err := recv(); err != nil {
				var re redis.Error
				if !errors.As(err, &re) {
					err = sentCause(ctx, err)
					c.noteFailure(ctx, node, err)
					c.failFrom(node, calls, out, i, err)
					return
				}
			}
		}
		reply, err := recv()
		if err != nil {
			re, isRe := err.(redis.Error)
			if isRe && isProtocolError(re) && i+1 < len(calls) {
				// What follows it tells whether the server closed the
				// connection after it (readAhead).
				ahead = readNext(conn, timeout)
			}
			if isRe && isProtocolError(re) && (ahead == nil || serverClosed(ahead.err)) {
				// The server closes the connection after this reply and
				// runs nothing sent after the command: the calls after
				// it fail unrun, which is no failure of the node, and the
				// connection is read to its end, so that it carries the
				// error and never goes back to the pool. Unless the
				// command is a script's (or a module's), which may have
				// sent that reply itself: then a kill of the connection
				// may have lost the replies of calls after it that ran
				// (errClosedAfterLookalike), and they may have run.
				setResult(calls, out, i, nil, re)
				cause := errAfterProtocolError
				if ahead != nil && mayReadAsProtocolError(cl) {
					cause = errtext.Errorf("%w: %w", errClosedAfterLookalike, ahead.err)
				}
				c.failFrom(node, calls, out, i+1, cause)
				if ahead == nil {
					_, _ = redis.ReceiveWithTimeout(conn, timeout)
				}
				return
			}
			if re, ok := err.(redis.Error); ok {
				// A secret echoed back is hidden (secret_echo.go); a
				// NOAUTH or WRONGPASS refuses the connection's
				// credentials, unless it answers the caller's own AUTH
				// or HELLO (commandReplyError).
				rerr := c.commandReplyError(node, cl.name, cl.args, re)
				refused = refused || isAuthFailure(rerr)
				if unserving == nil && cannotServe(re) {
					unserving = re
				}
				answered = answered || (replyProves(cl, nil) && !busyScript(re))
				setResult(calls, out, i, nil, rerr)
				continue
			}
			err = sentCause(ctx, err)
			c.noteFailure(ctx, node, err)
			c.failFrom(node, calls, out, i, err)
			return
		}
		answered = answered || replyProves(cl, nil)
		setResult(calls, out, i, reply, nil)
	}
	switch {
	case unserving != nil:
		c.noteUnserving(node, unserving)
	case answered && !refused:
		c.noteSuccess(node)
	}
}

// conn borrows a connection to the node: a READONLY one for replica reads.
// With a canceller, the connection is registered with it. A borrow that
// Close's closing of the pools refused fails with an error wrapping
// ErrClosed, as every call after Close does.
func (c *Client) conn(ctx context.Context, ns *nodeState, k *canceller) (redis.Conn, error) {
	conn, err := c.borrow(ctx, ns, k)
	if err != nil && errors.Is(err, pool.ErrClosed) {
		err = errtext.Errorf("%w (%w)", ErrClosed, err)
	}
	return conn, err
}

// borrow is conn without the translation of the pools' closed error.
func (c *Client) borrow(ctx context.Context, ns *nodeState, k *canceller) (redis.Conn, error) {
	if k != nil {
		conn, abort, err := c.pools.GetAbortable(ctx, ns.node.Addr, ns.readOnly)
		if err == nil {
			k.add(abort)
		}
		return conn, err
	}
	if ns.readOnly {
		return c.pools.GetReadOnly(ctx, ns.node.Addr)
	}
	return c.pools.Get(ctx, ns.node.Addr)
}

// replyTimeout is how long to wait for each reply: the pool's read timeout,
// cut short by the context's deadline. A batch with a blocking command
// (BLPOP, XREAD with BLOCK, WAIT; see blockFor) adds the time the command
// asked the server to block, and one that blocks without limit waits as
// long as the context allows.
func (c *Client) replyTimeout(ctx context.Context, calls []*call) (time.Duration, error) {
	t := c.readTimeout
	for _, cl := range calls {
		if d, ok := blockFor(cl); ok {
			if d == 0 {
				t = 0
				break
			}
			t = max(t, c.readTimeout+d)
		}
	}
	if dl, ok := ctx.Deadline(); ok {
		rem := time.Until(dl)
		if rem <= 0 {
			return 0, fmt.Errorf("shardis: %w", context.DeadlineExceeded)
		}
		if t == 0 || rem < t {
			t = rem
		}
	}
	return t, nil
}

// sentCause is contextCause for a command already sent: when the
// caller's context cut the wait for its reply short, the error says that
// the command may have run (as the automatic pipeline's does).
func sentCause(ctx context.Context, err error) error {
	cerr := ctx.Err()
	if cerr == nil {
		if dl, ok := ctx.Deadline(); !ok || time.Now().Before(dl) {
			return err
		}
		cerr = context.DeadlineExceeded
	}
	return errtext.Errorf("%w before the reply came (the command may have run): %v", cerr, err)
}

// contextCause marks an I/O error that the caller's context caused (its
// deadline cut the read short, or it was cancelled) so that errors.Is finds
// the context error.
func contextCause(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return errtext.Errorf("%w (%v)", cerr, err)
	}
	if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
		return errtext.Errorf("%w (%v)", context.DeadlineExceeded, err)
	}
	return err
}
