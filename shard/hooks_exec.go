package shard

import (
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard/command"
)

// observer holds a client's hooks; a client without hooks has none, so
// that every hook point costs one nil check.
type observer struct {
	h     Hooks
	exec  bool // Command or Pipeline set: the executor reports attempts
	ops   bool // Start or Finish set
	state bool // NodeState set
	slots bool // SlotMap set
}

// newObserver returns the observer of c for h (nil when h sets nothing)
// and the pool dial hook for its Dial hook.
func newObserver(c *Client, h *Hooks) (*observer, pool.DialHook) {
	if h == nil {
		return nil, nil
	}
	o := &observer{h: guardHooks(c, *h)}
	h = &o.h
	o.exec = h.Command != nil || h.Pipeline != nil
	o.ops = h.Start != nil || h.Finish != nil
	o.state = h.NodeState != nil
	o.slots = h.SlotMap != nil
	var onDial pool.DialHook
	if dial := h.Dial; dial != nil {
		onDial = func(ctx context.Context, addr string, readOnly bool, took time.Duration, err error) {
			node := Node{Name: addr, Addr: addr}
			if i, ok := c.nodes.lookup(addr); ok {
				node = c.nodes.get(i).node
			}
			dial(ctx, &DialEvent{Node: node, ReadOnly: readOnly, Duration: took, Err: err})
		}
	}
	if !o.exec && !o.ops && !o.state && !o.slots && h.Refresh == nil {
		return nil, onDial
	}
	return o, onDial
}

// guardHooks returns h with every hook run by a callUser function, which
// recovers its panic (callback.go). Start is run so where it is called.
func guardHooks(c *Client, h Hooks) Hooks {
	if f := h.Finish; f != nil {
		h.Finish = func(ctx context.Context, op *Op) { callUser2(c, "Hooks.Finish", f, ctx, op) }
	}
	if f := h.Command; f != nil {
		h.Command = func(ctx context.Context, ev *CommandEvent) { callUser2(c, "Hooks.Command", f, ctx, ev) }
	}
	if f := h.Pipeline; f != nil {
		h.Pipeline = func(ctx context.Context, ev *PipelineEvent) { callUser2(c, "Hooks.Pipeline", f, ctx, ev) }
	}
	if f := h.Dial; f != nil {
		h.Dial = func(ctx context.Context, ev *DialEvent) { callUser2(c, "Hooks.Dial", f, ctx, ev) }
	}
	if f := h.Refresh; f != nil {
		h.Refresh = func(ctx context.Context, ev *RefreshEvent) { callUser2(c, "Hooks.Refresh", f, ctx, ev) }
	}
	if f := h.NodeState; f != nil {
		h.NodeState = func(ev NodeEvent) { callUser1(c, "Hooks.NodeState", f, ev) }
	}
	if f := h.SlotMap; f != nil {
		h.SlotMap = func(ev SlotMapEvent) { callUser1(c, "Hooks.SlotMap", f, ev) }
	}
	return h
}

// runHooked is run, reporting each node's part of the batch to the
// Command and Pipeline hooks when they are set.
func (c *Client) runHooked(ctx context.Context, calls []*call) (abandoned bool) {
	if c.obs == nil || !c.obs.exec {
		return c.run(ctx, calls)
	}
	return c.runObserved(ctx, calls)
}

// sentCall is a call of a batch as it was sent: its node and attempt.
type sentCall struct {
	cl      *call
	node    int
	attempt int
}

// passScratch is the reusable bookkeeping of one observed batch.
type passScratch struct {
	sent  []sentCall
	nodes []int
	redir []Redirect
	part  []*call
	ev    CommandEvent
	pev   PipelineEvent
}

var passScratches = sync.Pool{New: func() any { return new(passScratch) }}

// clockBase is the last full reading of the clock; now derives the time
// from it and the monotonic clock.
var clockBase atomic.Pointer[time.Time]

// now returns the current time for hook events at the cost of one
// monotonic clock reading (time.Now reads the wall clock too, which
// doubles the cost on some virtual machines). The wall clock is read
// again once a second, so a step of the system clock shows within one.
func now() time.Time {
	if b := clockBase.Load(); b != nil {
		if d := time.Since(*b); d < time.Second {
			return b.Add(d)
		}
	}
	t := time.Now()
	clockBase.Store(&t)
	return t
}

// ops recycles the operations given to the Start and Finish hooks.
var ops = sync.Pool{New: func() any { return new(Op) }}

// runSide runs calls the client sends for its own purposes on the way to
// a caller's command (a migration's MIGRATE, DEL, or a read's transaction
// at the old owner) with send (runPooled, autoDo, autoDoTx), reporting each
// node's part to the Command and Pipeline hooks as runHooked does, so that
// what a migration costs each node shows in traces and metrics.
func (c *Client) runSide(ctx context.Context, calls []*call, send func(context.Context, []*call) bool) (abandoned bool) {
	if c.obs == nil || !c.obs.exec {
		return send(ctx, calls)
	}
	return c.runObservedWith(ctx, calls, send)
}

func (c *Client) runObserved(ctx context.Context, calls []*call) (abandoned bool) {
	return c.runObservedWith(ctx, calls, c.run)
}

func (c *Client) runObservedWith(ctx context.Context, calls []*call, send func(context.Context, []*call) bool) (abandoned bool) {
	if len(calls) == 0 {
		return send(ctx, calls)
	}
	op := calls[0].op
	first := op != nil && !op.passed && !op.side // the operation's first batch, nothing sent before
	var ps *passScratch
	if first {
		ps = op.scratch
	} else {
		ps = passScratches.Get().(*passScratch)
	}
	for _, cl := range calls {
		if cl.err == nil && cl.node >= 0 {
			ps.sent = append(ps.sent, sentCall{cl: cl, node: cl.node, attempt: cl.attempts})
			if !containsInt(ps.nodes, cl.node) {
				ps.nodes = append(ps.nodes, cl.node)
			}
		}
	}
	var start time.Time
	if first {
		start = op.Start // it starts now
	} else {
		start = now()
	}
	abandoned = send(ctx, calls)
	took := time.Since(start)
	if op != nil {
		op.passed, op.end = true, start.Add(took)
	}
	var q *deferredReports
	if c.mig.Load() != nil {
		q, _ = ctx.Value(deferredKey{}).(*deferredReports)
	}
	for _, node := range ps.nodes {
		c.reportPart(ctx, ps, node, start, took, q)
	}
	clear(ps.sent)
	ps.sent, ps.nodes = ps.sent[:0], ps.nodes[:0]
	if !first {
		passScratches.Put(ps)
	}
	return abandoned
}

// reportPart reports node's share of an observed batch, or hands it to q
// (when not nil) to be reported later.
func (c *Client) reportPart(ctx context.Context, ps *passScratch, node int, start time.Time, took time.Duration, q *deferredReports) {
	h := &c.obs.h
	n := 0
	var only sentCall
	for _, s := range ps.sent {
		if s.node == node {
			n++
			only = s
		}
	}
	from := c.nodes.get(node).node
	cut := cutByClose(ctx)
	if n == 1 {
		if h.Command == nil {
			return
		}
		cl := only.cl
		ev := &ps.ev
		*ev = CommandEvent{Node: from, ServerAddr: c.sentServerAddr(from, cl), Name: cl.name, Attempt: only.attempt, Start: start, Duration: took, cl: cl}
		if w := cl.whole; w != nil {
			ev.operation = operationName(w.name, w.info)
		}
		ev.Outcome, ev.Err = c.attemptOutcome(cl, cut)
		if ev.Outcome == OutcomeRedirect {
			ev.Redirect = c.redirectOf(cl, from)
		}
		if !q.command(ev) {
			h.Command(ctx, ev)
		}
		*ev = CommandEvent{}
		return
	}
	if h.Pipeline == nil {
		return
	}
	ev := &ps.pev
	*ev = PipelineEvent{Node: from, ServerAddr: c.sentServerAddr(from, only.cl), Commands: n, Start: start, Duration: took}
	ps.redir, ps.part = ps.redir[:0], ps.part[:0]
	whole := only.cl.whole // the caller's command, while every command is a part of it
	for _, s := range ps.sent {
		if s.node != node {
			continue
		}
		cl := s.cl
		if cl.whole != whole {
			whole = nil
		}
		ps.part = append(ps.part, cl)
		ev.Attempt = max(ev.Attempt, s.attempt)
		o, err := c.attemptOutcome(cl, cut)
		ev.Outcomes[o]++
		if o != OutcomeOK && ev.Err == nil {
			ev.Outcome, ev.Err = o, err
		}
		if o == OutcomeRedirect {
			ps.redir = append(ps.redir, c.redirectOf(cl, from))
		}
	}
	ev.Redirects, ev.calls = ps.redir, ps.part
	if whole != nil {
		ev.operation = operationName(whole.name, whole.info)
	}
	if !q.pipeline(ev) {
		h.Pipeline(ctx, ev)
	}
	*ev = PipelineEvent{}
	clear(ps.part)
}

// runPlanned runs calls planned under fp (executePlanned) and then stops
// counting them (endPlan). An execution planned by a migration's old
// topology is counted in its fence until it has its results, and the
// switch waits for it; so is one planned by the new topology of a
// migration that a rollback may turn around, which the rollback's switch
// waits for: their Command and Pipeline events are reported once they are
// no longer counted, so that a slow hook (a tracing exporter that stalls)
// does not hold the switch, for every client of the deployment.
func (c *Client) runPlanned(ctx context.Context, calls []*call, fp fencePlan) (abandoned bool) {
	if ctx, release := c.bindLife(ctx, calls); release != nil {
		defer release()
		return c.runPlannedBound(ctx, calls, fp)
	}
	return c.runPlannedBound(ctx, calls, fp)
}

// runPlannedBound is runPlanned under a context that, for a blocking
// command, Close ends too (bindLife).
func (c *Client) runPlannedBound(ctx context.Context, calls []*call, fp fencePlan) (abandoned bool) {
	if (!fp.counted && !fp.active) || c.obs == nil || !c.obs.exec {
		abandoned = c.executePlanned(ctx, calls, fp)
		c.endPlan(fp, abandoned)
		return abandoned
	}
	q := new(deferredReports)
	abandoned = c.executePlanned(context.WithValue(ctx, deferredKey{}, q), calls, fp)
	c.endPlan(fp, abandoned)
	q.flush(ctx, &c.obs.h)
	return abandoned
}

// deferredKey is the context key of an execution's deferredReports.
type deferredKey struct{}

// deferredReports keeps the Command and Pipeline events of an execution
// until runPlanned reports them, in the order they came. Once flushed it
// keeps nothing: a report that comes later (from a goroutine the
// execution handed work to) is made at once.
type deferredReports struct {
	mu      sync.Mutex
	flushed bool
	events  []deferredEvent
}

// deferredEvent is one kept event: cmd or pipe.
type deferredEvent struct {
	cmd  *CommandEvent
	pipe *PipelineEvent
}

// command keeps a copy of ev; false when q is nil or flushed.
func (q *deferredReports) command(ev *CommandEvent) bool {
	if q == nil {
		return false
	}
	cp := *ev
	return q.keep(deferredEvent{cmd: &cp})
}

// pipeline keeps a copy of ev (its lists copied too: they are reused);
// false when q is nil or flushed.
func (q *deferredReports) pipeline(ev *PipelineEvent) bool {
	if q == nil {
		return false
	}
	cp := *ev
	cp.Redirects = append([]Redirect(nil), ev.Redirects...)
	cp.calls = append([]*call(nil), ev.calls...)
	return q.keep(deferredEvent{pipe: &cp})
}

func (q *deferredReports) keep(ev deferredEvent) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.flushed {
		return false
	}
	q.events = append(q.events, ev)
	return true
}

// flush reports the kept events to h's hooks.
func (q *deferredReports) flush(ctx context.Context, h *Hooks) {
	q.mu.Lock()
	events := q.events
	q.events, q.flushed = nil, true
	q.mu.Unlock()
	for _, ev := range events {
		switch {
		case ev.cmd != nil && h.Command != nil:
			h.Command(ctx, ev.cmd)
		case ev.pipe != nil && h.Pipeline != nil:
			h.Pipeline(ctx, ev.pipe)
		}
	}
}

// attemptOutcome is the outcome and the error reported for an attempt of
// cl; cut tells that Close cut the execution off (cutByClose). The error
// of a call that Close cut off is still the context.Canceled of the
// context Close ended, which the caller's context did not cause: it is
// reported as the caller will get it (markClosed), as a write that may
// have run (OutcomeUnknown) or, for a read, a failure on a closed client.
func (c *Client) attemptOutcome(cl *call, cut bool) (Outcome, error) {
	o := c.classify(cl)
	if !cut || o != OutcomeCanceled || !errors.Is(cl.err, context.Canceled) {
		return o, cl.err
	}
	if mayWrite(cl.info) {
		return OutcomeUnknown, closedErr(cl.err, true)
	}
	return OutcomeFailed, closedErr(cl.err, false)
}

// classify tells how an attempt ended, from the call's result after the
// batch and before the retry rules look at it; it follows judge.
func (c *Client) classify(cl *call) Outcome {
	err := cl.err
	if err == nil {
		return OutcomeOK
	}
	if c.sent != nil {
		// First: an error reply on a Sentinel shard may be retried too.
		if sh, replica := c.sent.shardOfCall(cl); sh != nil {
			return c.classifySentinel(cl, replica)
		}
	}
	var ne *NodeError
	if c.cl() != nil && cl.replica && !mayWrite(cl.info) && cl.node >= 0 && c.nodes.get(cl.node).readOnly &&
		!c.closed.Load() && replicaRefusedLogin(err) {
		return OutcomeRetry // judge sends a read that a replica refused the login for to the master
	}
	var re redis.Error
	if errors.As(err, &re) {
		if c.cl() != nil && unblockedByDemotion(cl.info, string(re)) {
			return OutcomeRetry // judge sends it to the slot's new master
		}
		return c.replyOutcome(re)
	}
	if c.cl() == nil {
		// A write cut off after it was sent, by the read timeout or a
		// reset, is what markUnknownOutcomes will make it; a cancelled or
		// expired context stays what the caller's error says.
		if _, ok := failedAfterSend(cl); ok {
			return OutcomeUnknown
		}
		if o, ok := deadlineOutcome(err); ok {
			return o
		}
		return OutcomeFailed
	}
	if errors.As(err, &ne) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) &&
		!errors.Is(ne.Err, redis.ErrPoolExhausted) && !isAuthFailure(ne.Err) && !c.closed.Load() {
		switch {
		case cl.replica && !mayWrite(cl.info) && cl.node >= 0 && c.nodes.get(cl.node).readOnly:
			return OutcomeRetry // judge sends a replica's failed read to the master at once, timed out or not
		case timedOut(ne.Err) && mayWrite(cl.info):
			return OutcomeUnknown // a write whose reply timed out: judge makes it an *UnknownOutcomeError
		}
	}
	if o, ok := deadlineOutcome(err); ok {
		return o
	}
	if !errors.As(err, &ne) || errors.Is(ne.Err, redis.ErrPoolExhausted) {
		return OutcomeFailed // a full pool is final at once (judge)
	}
	if cl.resets >= 1 && writeRefused(cl) {
		return OutcomeFailed // the write reset again: final (judge)
	}
	if notSent(ne.Err) || !mayWrite(cl.info) {
		return OutcomeRetry
	}
	return OutcomeUnknown
}

// replyOutcome classifies a server's error reply: in cluster mode a
// redirect or a state the client waits out is followed; any other reply
// stands.
func (c *Client) replyOutcome(re redis.Error) Outcome {
	if c.cl() != nil {
		switch cluster.ErrorCode(string(re)) {
		case "MOVED", "ASK", "TRYAGAIN":
			return OutcomeRedirect
		case "CLUSTERDOWN", "LOADING", "MASTERDOWN", "READONLY":
			return OutcomeRetry
		}
	}
	return OutcomeServerError
}

// classifySentinel is classify for a call on a Sentinel shard (on one of
// its replicas when replica is set); it follows judgeSentinel: what
// retrySentinel sends again is OutcomeRetry.
func (c *Client) classifySentinel(cl *call, replica bool) Outcome {
	err := cl.err
	open := !c.closed.Load() // a closed client retries nothing
	replica = replica && open
	wait := open && c.sent.opts.FailoverWait > 0 // retryLater is retried
	var ne *NodeError
	if replica && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) &&
		(errors.As(err, &ne) && !errors.Is(ne.Err, redis.ErrPoolExhausted) || isAuthFailure(err)) {
		// replicaUnfit: a replica's failed connection or login, a refusal
		// that carries the server's error reply included, sends the read
		// to the master at once.
		return OutcomeRetry
	}
	var re redis.Error
	if errors.As(err, &re) {
		code, _, _ := strings.Cut(string(re), " ")
		switch code {
		case "READONLY", "MASTERDOWN", "LOADING":
			if replica || wait {
				return OutcomeRetry
			}
		case "NOREPLICAS": // a master's refusal of a write only
			if wait && !replica {
				return OutcomeRetry
			}
		case "UNBLOCKED": // a demoted master's, or a repointed replica's, of a blocked command
			if (replica || wait) && unblockedByDemotion(cl.info, string(re)) {
				return OutcomeRetry
			}
		}
		return OutcomeServerError
	}
	if !errors.As(err, &ne) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		if o, ok := deadlineOutcome(err); ok {
			return o
		}
		return OutcomeFailed
	}
	switch {
	case errors.Is(ne.Err, redis.ErrPoolExhausted):
		return OutcomeFailed // final at once (judgeSentinel)
	case replica:
		return OutcomeRetry // sent to the master at once
	case cl.resets >= 1 && writeRefused(cl):
		return OutcomeFailed // the write reset again: final (judgeSentinel)
	case notSent(ne.Err) || !mayWrite(cl.info):
		if wait {
			return OutcomeRetry
		}
		if o, ok := deadlineOutcome(err); ok {
			return o
		}
		return OutcomeFailed
	}
	return OutcomeUnknown // an *UnknownOutcomeError
}

// deadlineOutcome classifies errors caused by a deadline or a cancelled
// context.
func deadlineOutcome(err error) (Outcome, bool) {
	switch {
	case errors.Is(err, context.Canceled):
		return OutcomeCanceled, true
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		return OutcomeTimeout, true
	}
	var te net.Error
	if errors.As(err, &te) && te.Timeout() {
		return OutcomeTimeout, true
	}
	return 0, false
}

// finalOutcome classifies an operation's final error.
func finalOutcome(err error) Outcome {
	if err == nil {
		return OutcomeOK
	}
	var re redis.Error
	var uo *UnknownOutcomeError
	var rt *RetryError
	var cw *cutWriteError
	switch {
	case errors.As(err, &uo):
		return OutcomeUnknown
	case errors.As(err, &rt):
		return OutcomeRetry
	case errors.As(err, &cw):
		// A blocking write that Close cut off: it may have run.
		return OutcomeUnknown
	case errors.Is(err, ErrClosed):
		// Before the error reply it may also wrap: a command that
		// waited out CLUSTERDOWN or READONLY when Close came.
		return OutcomeFailed
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		// The same for the caller's context ending during the wait.
		o, _ := deadlineOutcome(err)
		return o
	case errors.As(err, &re):
		return OutcomeServerError
	}
	if o, ok := deadlineOutcome(err); ok {
		return o
	}
	return OutcomeFailed
}

// redirectOf describes the redirect in cl's error reply, sent by from.
func (c *Client) redirectOf(cl *call, from Node) Redirect {
	var re redis.Error
	errors.As(cl.err, &re)
	msg := string(re)
	kind := cluster.ErrorCode(msg)
	rd := Redirect{Kind: kind, Slot: -1, From: from, To: from}
	if kind == "TRYAGAIN" {
		if r := c.cl(); cl.group >= 0 && r != nil {
			rd.Slot = cl.group
			if st := r.state.Load(); st != nil {
				rd.To = c.nodes.get(int(st.master[cl.group])).node
			}
		}
		return rd
	}
	if r, ok := cluster.ParseRedirect(msg, from.Addr); ok {
		rd.Slot, rd.To = r.Slot, Node{Name: r.Addr, Addr: r.Addr}
		if i, ok := c.nodes.lookup(r.Addr); ok {
			rd.To = c.nodes.get(i).node
		}
	} else {
		rd.To = Node{Name: "?", Addr: "?"}
	}
	return rd
}

// keysOf counts the keys of calls from the command table.
func keysOf(calls []*call) int {
	var buf [16]int
	n := 0
	for _, cl := range calls {
		if cl == nil || cl.info == nil {
			continue
		}
		if pos, err := cl.info.KeyPositions(cl.args, buf[:0]); err == nil {
			n += len(pos)
		}
	}
	return n
}

func containsInt(list []int, v int) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// opStartPlanned begins an operation planned under fp for the Start and
// Finish hooks; without them it returns ctx and a nil *Op, and opFinish
// does nothing. A plan
// counted by a migration's fence (by the old topology while it waits, or
// by the new one of a migration a rollback may turn around) is held by
// the fence's switch until it ends: the Start hook, program code that may
// be slow (a tracing exporter that stalls), runs outside that count, so
// that it holds neither the switch nor, behind it, the commands on moving
// keys of every process. The operation is counted again after the hook;
// when the plan now differs (the switch came meanwhile, or the client
// turned around), opStartPlanned returns the locator to plan the
// operation again by (nil otherwise): the caller plans its commands again
// and calls replanned. It returns the plan the operation runs under.
func (c *Client) opStartPlanned(ctx context.Context, name string, b *batch, pipeline bool, fp fencePlan) (context.Context, *Op, fencePlan, locator) {
	if c.obs == nil || !c.obs.ops {
		return ctx, nil, fp, nil
	}
	if c.obs.h.Start == nil || (!fp.counted && !fp.active) {
		ctx, op := c.startOp(ctx, name, b, pipeline)
		return ctx, op, fp, nil
	}
	c.endPlan(fp, false) // nothing of it ran
	ctx, op := c.startOp(ctx, name, b, pipeline)
	again, loc := c.planFence()
	if again == fp {
		// Still counted in the same migration and phase: planned by the
		// same topology, the plan stands.
		return ctx, op, fp, nil
	}
	return ctx, op, again, loc
}

// testHookPlanned, when set (by tests), runs in a Do or Pipeline.Exec
// counted by a migration's fence, between its planning (and its Start
// hook) and its execution, with the operation's name ("PIPELINE" for a
// pipeline): a caller held there holds the fence's switch.
var testHookPlanned atomic.Pointer[func(c *Client, op string)]

// plannedHold runs testHookPlanned for an operation counted under fp.
func (c *Client) plannedHold(fp fencePlan, op string) {
	if fp.counted || fp.active {
		if h := testHookPlanned.Load(); h != nil {
			(*h)(c, op)
		}
	}
}

// replanned points op at b's commands once the caller planned them again
// (opStartPlanned).
func (c *Client) replanned(op *Op, b *batch) {
	if op == nil {
		return
	}
	op.calls = b.calls
	if len(b.calls) > 0 {
		b.calls[0].op = op
	}
}

func (c *Client) startOp(ctx context.Context, name string, b *batch, pipeline bool) (context.Context, *Op) {
	op := ops.Get().(*Op)
	scratch := op.scratch
	if scratch == nil {
		scratch = new(passScratch)
	}
	*op = Op{Name: name, Commands: len(b.reqs), Start: now(), Pipeline: pipeline, name: name, calls: b.calls, scratch: scratch}
	if !pipeline {
		op.args = b.args // the command's arguments, as Do copied them
		var info *command.Info
		if len(b.calls) > 0 {
			info = b.calls[0].info // planned: a learned command has its info
		}
		op.operation = operationName(name, info)
	}
	if len(b.calls) > 0 {
		b.calls[0].op = op
	}
	if h := c.obs.h.Start; h != nil {
		if nctx := callUserStart(c, h, ctx, op); nctx != nil {
			ctx = nctx
		}
	}
	return ctx, op
}

// opFinish ends a Do started by opStartPlanned with its result's error.
func (c *Client) opFinish(ctx context.Context, op *Op, b *batch, err error) {
	if op == nil {
		return
	}
	if err != nil {
		op.Failed, op.Err, op.Outcome = 1, err, finalOutcome(err)
	}
	c.finishOp(ctx, op, b)
}

// opFinishPipeline ends a Pipeline.Exec started by opStartPlanned.
func (c *Client) opFinishPipeline(ctx context.Context, op *Op, b *batch, out []Result) {
	if op == nil {
		return
	}
	for _, r := range out {
		if r.Err != nil {
			op.Failed++
			if op.Err == nil {
				op.Err, op.Outcome = r.Err, finalOutcome(r.Err)
			}
		}
	}
	c.finishOp(ctx, op, b)
}

func (c *Client) finishOp(ctx context.Context, op *Op, b *batch) {
	var buf [8]int
	nodes := buf[:0]
	for _, cl := range b.calls {
		if cl.op == op {
			cl.op = nil
		}
		op.Attempts = max(op.Attempts, cl.attempts+1)
		if cl.node >= 0 && !containsInt(nodes, cl.node) {
			nodes = append(nodes, cl.node)
		}
	}
	if op.passed && op.Attempts == 1 {
		op.Duration = op.end.Sub(op.Start) // one batch: its end is the operation's
	} else {
		op.Duration = time.Since(op.Start)
	}
	op.Nodes = len(nodes)
	if len(nodes) == 1 {
		op.Node = c.nodes.get(nodes[0]).node
		var last *call // a call of the node: the server its last attempt went to
		for _, cl := range b.calls {
			if cl.node == nodes[0] {
				last = cl
			}
		}
		op.ServerAddr = c.sentServerAddr(op.Node, last)
	}
	if h := c.obs.h.Finish; h != nil {
		h(ctx, op)
	}
	*op = Op{scratch: op.scratch}
	ops.Put(op)
}
