package shard

import (
	"context"
	"errors"
	"sync"
)

// lentHooks is what the hooks see of the commands sent on a connection
// lent to a ForEachShard function: as for a Conn, each Do (DoContext,
// DoWithTimeout) is a run of its command, and the commands queued with
// Send since the last Flush are a run once flushed, which ends when
// Receive has read their replies (hooks_conn.go's connRun: an operation
// named after its command, or PIPELINE, with a Command or Pipeline event
// on the node). Replies read past the runs (MONITOR's feed, pub/sub
// messages) are not reported. nil when the client has no hook that would
// see a run.
type lentHooks struct {
	c    *Client
	ctx  context.Context // the function's: runs without a context of their own
	node int
	// server is the address the lent connection was dialed to, for a
	// Sentinel shard (its master then, perhaps replaced since).
	server string

	mu     sync.Mutex
	queued []connCmd  // sent with Send and not flushed
	runs   []*lentRun // flushed, their replies not all read; oldest first
}

// lentRun is a run whose replies are being read.
type lentRun struct {
	ctx  context.Context // the one Start returned
	r    *connRun
	n    int // commands
	read int // replies read
}

// failed notes that the run's command k got no reply: the connection
// failed with err. The connection's failure is one for all its commands,
// but what it says of each is not: when Close cut off the wait for a
// write's reply (a *cutWriteError, OutcomeUnknown: it may have run), a
// command that cannot write, whose reply was lost with it, changed
// nothing and simply failed (OutcomeFailed).
func (run *lentRun) failed(k int, err error) {
	var cw *cutWriteError
	if errors.As(err, &cw) && !mayWrite(run.r.calls[k].info) {
		err = cw.err
	}
	run.r.result(k, nil, err)
}

// lendHooks returns the hooks' view for a connection lent to a
// ForEachShard function on node (nil when no hook would see it).
func (c *Client) lendHooks(ctx context.Context, node int) *lentHooks {
	if c.obs == nil || (!c.obs.ops && !c.obs.exec) {
		return nil
	}
	return &lentHooks{c: c, ctx: ctx, node: node}
}

// start begins a run of cmds (connRunStart) under ctx.
func (h *lentHooks) start(ctx context.Context, cmds []connCmd) *lentRun {
	rctx, r := h.c.connRunStart(ctx, h.node, 0, cmds)
	if r == nil {
		return nil
	}
	r.server = h.server
	return &lentRun{ctx: rctx, r: r, n: len(cmds)}
}

// send notes a command queued with Send.
func (h *lentHooks) send(name string, args []any) {
	if h == nil {
		return
	}
	h.mu.Lock()
	h.queued = append(h.queued, connCmd{name: name, args: args})
	h.mu.Unlock()
}

// flush makes the queued commands a run, before they are written.
func (h *lentHooks) flush() {
	if h == nil {
		return
	}
	h.mu.Lock()
	cmds := h.queued
	h.queued = nil
	h.mu.Unlock()
	if len(cmds) == 0 {
		return
	}
	if run := h.start(h.ctx, cmds); run != nil {
		h.mu.Lock()
		h.runs = append(h.runs, run)
		h.mu.Unlock()
	}
}

// received notes a reply read by Receive: the oldest run's next one. An
// error that is not a server's error reply is the connection's failure
// (a failed Flush passes its own): no reply of any run will be read,
// and every run ends with it (failed).
func (h *lentHooks) received(reply any, err error) {
	if h == nil {
		return
	}
	if err != nil && !isRedisError(err) {
		h.failed(err)
		return
	}
	h.mu.Lock()
	if len(h.runs) == 0 {
		h.mu.Unlock()
		return // past the runs: a pushed message
	}
	run := h.runs[0]
	run.r.result(run.read, reply, err)
	run.read++
	done := run.read == run.n
	if done {
		h.runs = h.runs[1:]
	}
	h.mu.Unlock()
	if done {
		run.r.end(run.ctx)
	}
}

// failed ends every run flushed whose replies were not all read: each
// command without a reply counts as failed with err.
func (h *lentHooks) failed(err error) {
	h.mu.Lock()
	runs := h.runs
	h.runs = nil
	h.mu.Unlock()
	for _, run := range runs {
		for ; run.read < run.n; run.read++ {
			run.failed(run.read, err)
		}
		run.r.end(run.ctx)
	}
}

// doStart begins the run of a Do of name (none for ""): the commands
// queued before it, which Do flushes, and its own. It returns the runs
// flushed before whose replies Do reads first, and the new run.
func (h *lentHooks) doStart(name string, args []any) (earlier []*lentRun, run *lentRun) {
	if h == nil {
		return nil, nil
	}
	return h.doStartIn(h.ctx, name, args)
}

// doStartIn is doStart for a DoContext under ctx.
func (h *lentHooks) doStartIn(ctx context.Context, name string, args []any) (earlier []*lentRun, run *lentRun) {
	if h == nil {
		return nil, nil
	}
	h.mu.Lock()
	cmds := h.queued
	h.queued = nil
	earlier = h.runs
	h.runs = nil
	h.mu.Unlock()
	if name != "" {
		cmds = append(cmds, connCmd{name: name, args: args})
	}
	if len(cmds) > 0 {
		run = h.start(ctx, cmds)
	}
	return earlier, run
}

// doEnd ends the runs of a Do (doStart) with its result. Do returns the
// last reply only (every reply in a slice for a Do of ""), with the
// first error reply among them: a reply it read without returning it
// counts as nil; when the connection failed, every command whose reply
// was not read failed with it (lentRun.failed).
func (h *lentHooks) doEnd(earlier []*lentRun, run *lentRun, all bool, reply any, err error) {
	if h == nil {
		return
	}
	failed := err != nil && !isRedisError(err)
	replies, _ := reply.([]any)
	k := 0 // the next reply of replies (all)
	next := func() (any, error) {
		if !all || k >= len(replies) {
			return nil, nil
		}
		r := replies[k]
		k++
		if re, ok := r.(error); ok && isRedisError(re) {
			return nil, re
		}
		return r, nil
	}
	for _, e := range earlier {
		for ; e.read < e.n; e.read++ {
			if failed {
				e.failed(e.read, err)
				continue
			}
			r, rerr := next()
			e.r.result(e.read, r, rerr)
		}
		e.r.end(e.ctx)
	}
	if run == nil {
		return
	}
	for i := 0; i < run.n; i++ {
		if failed {
			run.failed(i, err)
			continue
		}
		r, rerr := next()
		if i == run.n-1 && !all && !failed {
			r, rerr = reply, nil // Do's own reply
			if re, ok := reply.(error); ok && isRedisError(re) {
				rerr = re
			}
		}
		run.r.result(i, r, rerr)
	}
	run.r.end(run.ctx)
}

// release ends the runs whose replies were not all read when the
// connection went back: the commands without a reply count as failed
// with errTrackedReleased.
func (h *lentHooks) release() {
	if h == nil {
		return
	}
	h.mu.Lock()
	h.queued = nil
	h.mu.Unlock()
	h.failed(errTrackedReleased)
}
