package shard

import (
	"context"
	"errors"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/shard/command"
)

// connRun is what the hooks see of one run of a Conn's transaction (the
// commands sent at once on the connection its WATCH or MULTI holds); nil
// when the client has no hook that would see it.
type connRun struct {
	c     *Client
	op    *Op // nil without Start and Finish
	node  int
	calls []*call
	start time.Time
	// server is the address the run's connection was dialed to, for a
	// Sentinel shard (its master then); "" names the node's current one.
	server string
}

// connRunStart begins the hooks' view of a run of cmds on node: an
// operation named after its command when it has one, "MULTI" when it
// holds a MULTI (or EXEC), "PIPELINE" otherwise.
func (c *Client) connRunStart(ctx context.Context, node, group int, cmds []connCmd) (context.Context, *connRun) {
	if c.obs == nil || !c.obs.ops && !c.obs.exec {
		return ctx, nil
	}
	r := &connRun{c: c, node: node, calls: make([]*call, len(cmds))}
	tx := false
	for k, cmd := range cmds {
		r.calls[k] = &call{name: cmd.name, args: cmd.args, info: command.Lookup(cmd.name), node: node, group: group}
		if n := lowerName(cmd.name); n == "multi" || n == "exec" {
			tx = true
		}
	}
	r.start = now()
	if !c.obs.ops {
		return ctx, r
	}
	op := ops.Get().(*Op)
	*op = Op{Commands: len(cmds), Start: r.start, calls: r.calls, scratch: op.scratch}
	switch {
	case len(cmds) == 1:
		op.Name, op.args, op.operation = cmds[0].name, cmds[0].args, operationName(cmds[0].name, r.calls[0].info)
	case tx:
		op.Name, op.operation, op.tx = txOperation, txOperation, true
	default:
		op.Name, op.Pipeline = "PIPELINE", true
	}
	op.name = op.Name
	r.op = op
	if h := c.obs.h.Start; h != nil {
		if nctx := callUserStart(c, h, ctx, op); nctx != nil {
			ctx = nctx
		}
	}
	return ctx, r
}

// result notes the error of the run's command k (nil: a reply that is
// not an error; an EXEC's nil reply is noted as ErrTxAborted).
func (r *connRun) result(k int, reply any, err error) {
	if r == nil {
		return
	}
	if err == nil && reply == nil && lowerName(r.calls[k].name) == "exec" {
		err = ErrTxAborted
	}
	r.calls[k].err = err
}

// connOutcome classifies a reply or failure of a Conn's transaction: the
// Conn follows no redirect and retries nothing, so an error reply is
// OutcomeServerError whatever it says.
func connOutcome(err error) Outcome {
	var re redis.Error
	if err == nil {
		return OutcomeOK
	}
	if errors.Is(err, ErrTxAborted) || errors.As(err, &re) {
		return OutcomeServerError
	}
	return finalOutcome(err)
}

// end reports the run: a command event for a run of one command, a
// pipeline event otherwise, then the operation's end.
func (r *connRun) end(ctx context.Context) {
	if r == nil {
		return
	}
	took := time.Since(r.start)
	c := r.c
	from := c.nodes.get(r.node).node
	server := r.server
	if server == "" {
		server = c.serverAddr(from)
	}
	if h := c.obs.h.Command; h != nil && len(r.calls) == 1 {
		cl := r.calls[0]
		h(ctx, &CommandEvent{Node: from, ServerAddr: server, Name: cl.name, Outcome: connOutcome(cl.err), Err: cl.err, Start: r.start, Duration: took, cl: cl})
	}
	if h := c.obs.h.Pipeline; h != nil && len(r.calls) > 1 {
		ev := &PipelineEvent{Node: from, ServerAddr: server, Commands: len(r.calls), Start: r.start, Duration: took, calls: r.calls}
		for _, cl := range r.calls {
			if n := lowerName(cl.name); n == "multi" || n == "exec" {
				ev.tx = true // as the run's operation is named (MULTI)
			}
			o := connOutcome(cl.err)
			ev.Outcomes[o]++
			if o != OutcomeOK && ev.Err == nil {
				ev.Outcome, ev.Err = o, cl.err
			}
		}
		h(ctx, ev)
	}
	op := r.op
	if op == nil {
		return
	}
	op.Duration, op.Node, op.Nodes, op.Attempts = took, from, 1, 1
	op.ServerAddr = server
	for _, cl := range r.calls {
		if cl.err != nil {
			op.Failed++
			if op.Err == nil {
				op.Err, op.Outcome = cl.err, connOutcome(cl.err)
			}
		}
	}
	if h := c.obs.h.Finish; h != nil {
		h(ctx, op)
	}
	*op = Op{scratch: op.scratch}
	ops.Put(op)
}
