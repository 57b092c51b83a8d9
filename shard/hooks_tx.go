package shard

import (
	"context"
	"errors"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/shard/command"
)

// txOperation is the operation name (Op.Name, Op.Operation) of a
// Client.Tx: the transaction is one operation, named after the command
// that opens it, as OpenTelemetry's database conventions name an
// operation (db.operation.name) by its Redis command.
const txOperation = "MULTI"

// txHooks is what the hooks see of one Client.Tx; nil when the client
// has no hook that would see it, so that a transaction without hooks
// costs a nil check.
type txHooks struct {
	c       *Client
	op      *Op     // nil without Start and Finish
	attempt int     // the transaction's attempts before the current one
	node    int     // the node of the last attempt that reached one; -1 before
	calls   []*call // WATCH, then the last MULTI ... EXEC batch
	queued  int     // the commands the last batch queued
	// server is the address the current attempt's connection was dialed
	// to, for a Sentinel shard ("" otherwise, or without a connection).
	server string
	// watching: the attempt's WATCH is being sent; its failure ends an
	// attempt of which nothing ran (txNotRun), which a Sentinel shard
	// may run again.
	watching bool
}

// txStart begins the hooks' view of a transaction watching keys: the
// operation given to Start, whose context the transaction runs with.
func (c *Client) txStart(ctx context.Context, keys []any) (context.Context, *txHooks) {
	if c.obs == nil || !c.obs.ops && !c.obs.exec {
		return ctx, nil
	}
	th := &txHooks{c: c, node: -1}
	th.calls = []*call{{name: "WATCH", args: keys, info: command.Lookup("WATCH"), node: -1}}
	if !c.obs.ops {
		return ctx, th
	}
	op := ops.Get().(*Op)
	*op = Op{Name: txOperation, Start: now(), name: txOperation, operation: txOperation, tx: true, calls: th.calls, scratch: op.scratch}
	th.op = op
	if h := c.obs.h.Start; h != nil {
		if nctx := callUserStart(c, h, ctx, op); nctx != nil {
			ctx = nctx
		}
	}
	return ctx, th
}

// finish ends the transaction's operation with its error.
func (th *txHooks) finish(ctx context.Context, err error) {
	if th == nil || th.op == nil {
		return
	}
	op := th.op
	op.Duration = time.Since(op.Start)
	op.Attempts = th.attempt + 1
	op.calls = th.calls
	op.Commands = th.queued
	if th.node >= 0 {
		op.Node, op.Nodes = th.c.nodes.get(th.node).node, 1
		op.ServerAddr = th.serverAddr(op.Node)
	}
	if err != nil {
		op.Failed, op.Err, op.Outcome = 1, err, txFinalOutcome(err)
	}
	if h := th.c.obs.h.Finish; h != nil {
		h(ctx, op)
	}
	*op = Op{scratch: op.scratch}
	ops.Put(op)
}

// txFinalOutcome classifies a transaction's final error: ErrTxAborted is
// the server's answer (EXEC refused to run), OutcomeServerError.
func txFinalOutcome(err error) Outcome {
	if errors.Is(err, ErrTxAborted) {
		return OutcomeServerError
	}
	return finalOutcome(err)
}

// txOutcome classifies one reply or failure of a command sent in a
// transaction, as Client.Tx goes on from it: in cluster mode a redirect,
// and the failures after which the transaction runs again, are
// OutcomeRedirect and OutcomeRetry.
func (c *Client) txOutcome(err error) Outcome {
	if err == nil {
		return OutcomeOK
	}
	if errors.Is(err, ErrTxAborted) {
		return OutcomeServerError
	}
	var (
		re redis.Error
		ne *NodeError
	)
	switch {
	case errors.As(err, &re):
		return c.replyOutcome(re)
	case c.cl() != nil && errors.As(err, &ne) && notSent(ne.Err) && !isAuthFailure(ne.Err) && !c.closed.Load():
		return OutcomeRetry
	}
	return finalOutcome(err)
}

// sentinelTxRetried reports whether an attempt of a transaction on node
// that failed with err, nothing of it having run (txNotRun,
// txNotWritten), is run again on a Sentinel shard (retrySentinelTx):
// with FailoverWait, the failure may mean a new master.
func (c *Client) sentinelTxRetried(ctx context.Context, node int, err error) bool {
	return c.sent != nil && c.sent.opts.FailoverWait > 0 && !isAuthFailure(err) &&
		c.sentinelTxFailover(ctx, node, err) != nil
}

// outcome classifies err, the reply or failure of a command of the
// transaction on node (txOutcome); retried says that the attempt, of
// which nothing ran, is run again on a Sentinel shard
// (sentinelTxRetried): then a failure that says the master changed
// (READONLY, a refused connection, ...) is OutcomeRetry, as a command's
// is (classifySentinel). wrote says that fn wrote through Tx.Do: the
// attempt is never run again (ErrTxNotRetried), so in cluster mode a
// MOVED, a CLUSTERDOWN or an unreachable node is no redirect followed or
// failure retried, but one that stands, as the operation's is.
func (th *txHooks) outcome(ctx context.Context, node int, err error, retried, wrote bool) Outcome {
	o := th.c.txOutcome(err)
	if wrote && (o == OutcomeRedirect || o == OutcomeRetry) {
		if f := finalOutcome(err); f != OutcomeRetry {
			return f
		}
		return OutcomeFailed
	}
	if retried && o != OutcomeOK && o != OutcomeRetry && th.c.sentinelTxRetried(ctx, node, err) {
		return OutcomeRetry
	}
	return o
}

// serverAddr is the ServerAddr of the transaction's events on node n:
// the server its current attempt's connection went to.
func (th *txHooks) serverAddr(n Node) string {
	if th.server != "" {
		return th.server
	}
	return th.c.serverAddr(n)
}

// command reports one command of the transaction sent alone (WATCH, a
// Tx.Do) to node, started at start, with its error. wrote says that fn
// wrote through Tx.Do, this command included unless the node refused it
// before running it: the attempt is never run again.
func (th *txHooks) command(ctx context.Context, node, group int, name string, args []any, start time.Time, err error, wrote bool) {
	th.node = node
	h := th.c.obs.h.Command
	if h == nil {
		return
	}
	cl := &call{name: name, args: args, info: command.Lookup(name), node: node, group: group, err: err}
	from := th.c.nodes.get(node).node
	// A WATCH that failed ends an attempt of which nothing ran: the
	// attempt runs again when the failure is one a Sentinel shard waits
	// out. A Tx.Do's failure ends it as fn returns it: never again.
	o := th.outcome(ctx, node, err, th.watching, wrote)
	ev := &CommandEvent{Node: from, ServerAddr: th.serverAddr(from), Name: name, Outcome: o, Err: err, Attempt: th.attempt, Start: start, Duration: time.Since(start), cl: cl}
	if ev.Outcome == OutcomeRedirect {
		ev.Redirect = th.c.redirectOf(cl, from)
	}
	h(ctx, ev)
}

// batch returns the calls of a MULTI ... EXEC batch for the hooks, and
// keeps them for the operation's Statement. When asking, MULTI is sent
// after ASKING, which is no call of its own: as in a pipeline's part
// (call.asking) and in Stats, it is not one of the batch's Commands, and
// its reply has no outcome.
func (th *txHooks) batch(node, group int, asking bool, queue []queued) []*call {
	th.node, th.queued = node, len(queue)
	calls := th.calls[:1] // WATCH's
	add := func(name string, args []any) {
		calls = append(calls, &call{name: name, args: args, info: command.Lookup(name), node: node, group: group})
	}
	add("MULTI", nil)
	calls[1].asking = asking
	for _, q := range queue {
		add(q.name, q.args)
	}
	add("EXEC", nil)
	th.calls = calls
	return calls[1:]
}

// lostReplyErr is, for the hooks, the error of cl, a command of a MULTI
// ... EXEC batch whose reply was lost when the batch failed with err.
// When err says that the transaction may have run (an
// *UnknownOutcomeError for EXEC), a command that changes no data, MULTI
// or a queued read, changed nothing whatever the server ran: it simply
// failed, with the connection's failure (OutcomeFailed, OutcomeTimeout),
// where the writes and EXEC keep OutcomeUnknown.
func lostReplyErr(cl *call, err error) error {
	if uo, ok := err.(*UnknownOutcomeError); ok && !mayWrite(cl.info.Resolve(cl.args)) {
		return uo.Err
	}
	return err
}

// pipeline reports the MULTI ... EXEC batch sent to node at start, whose
// round trip took took: the calls from batch, each with its reply's
// error (a queued command's is that of its QUEUED reply; EXEC's is
// ErrTxAborted when a watched key changed) or the failure that cut the
// batch short. retried says that the attempt, of which nothing ran, is
// run again on a Sentinel shard (sentinelTxRetried); wrote, that fn wrote
// through Tx.Do, so that it is never run again.
func (th *txHooks) pipeline(ctx context.Context, node int, calls []*call, start time.Time, took time.Duration, retried, wrote bool) {
	h := th.c.obs.h.Pipeline
	if h == nil {
		return
	}
	from := th.c.nodes.get(node).node
	ev := &PipelineEvent{Node: from, ServerAddr: th.serverAddr(from), Commands: len(calls), Attempt: th.attempt, Start: start, Duration: took, calls: calls, tx: true}
	for _, cl := range calls {
		o := th.outcome(ctx, node, cl.err, retried, wrote)
		ev.Outcomes[o]++
		if o != OutcomeOK && ev.Err == nil {
			ev.Outcome, ev.Err = o, cl.err
		}
		if o == OutcomeRedirect {
			ev.Redirects = append(ev.Redirects, th.c.redirectOf(cl, from))
		}
	}
	h(ctx, ev)
}

// failFast reports the WATCH of an attempt that failed before anything
// was sent to node (a node marked down, a connection that could not be
// had), as a command that fails fast is reported.
func (th *txHooks) failFast(ctx context.Context, node, group int, keys []any, err error) {
	if th == nil {
		return
	}
	th.node, th.server = node, "" // no connection: the shard's master now
	if th.c.obs.h.Command != nil {
		th.watching = true // nothing was sent: txNotRun
		th.command(ctx, node, group, "WATCH", keys, now(), err, false)
		th.watching = false
	}
}
