package shard

import (
	"context"
	"fmt"
)

// Pipeline queues commands and sends them together: one round trip per
// node, nodes in parallel, results in the order the commands were queued.
// A Pipeline is not safe for concurrent use; create one per goroutine
// (they are cheap). Multi-key commands that span shards are split and
// merged as in Client.Do.
type Pipeline struct {
	c    *Client
	cmds []queued
	// args holds the arguments of every queued command, copied by Send so
	// that a caller's variadic argument slice need not be allocated.
	args []any
	b    batch // reused by Exec unless workers cut off by a context still hold it
	// inner: a part of another Exec's operation (MGETs it sends again
	// without GET parts): no operation of its own for the hooks.
	inner bool
}

type queued struct {
	name     string
	args     []any
	routeKey any
}

// Pipeline returns an empty pipeline on c.
func (c *Client) Pipeline() *Pipeline { return &Pipeline{c: c} }

// Send queues a command routed by its keys.
func (p *Pipeline) Send(name string, args ...any) {
	p.cmds = append(p.cmds, queued{name: name, args: p.keep(args)})
}

// keep copies args into the pipeline's argument buffer. A command's copy
// stays valid when the buffer grows (it keeps the old array).
func (p *Pipeline) keep(args []any) []any {
	start := len(p.args)
	p.args = append(p.args, args...)
	return p.args[start:len(p.args):len(p.args)]
}

// SendKey queues a command routed by key, as Client.DoKey.
func (p *Pipeline) SendKey(key string, name string, args ...any) {
	p.cmds = append(p.cmds, queued{name: name, args: p.keep(args), routeKey: key})
}

// Len returns the number of queued commands.
func (p *Pipeline) Len() int { return len(p.cmds) }

// Reset drops the queued commands.
func (p *Pipeline) Reset() {
	clear(p.cmds)
	p.cmds = p.cmds[:0]
	clear(p.args)
	p.args = p.args[:0]
}

// Exec sends every queued command, empties the queue and returns one Result
// per command in queue order. Each Result carries its own error (a
// redis.Error from the server, a *NodeError for a node that failed, a
// *CrossShardError, ...); the returned error is non-nil only when nothing
// could be attempted (closed client, context already done), and the queue
// is emptied then too: a later Exec never sends those commands again.
func (p *Pipeline) Exec(ctx context.Context) ([]Result, error) {
	c := p.c
	if err := checkContext(ctx); err != nil {
		p.Reset() // nothing was sent, and nothing is sent by a later Exec
		return nil, err
	}
	if c.closed.Load() {
		p.Reset()
		return nil, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		p.Reset()
		return nil, fmt.Errorf("shardis: %w", err)
	}
	b := &p.b
	b.reset(len(p.cmds))
	fp, loc := c.planFence() // planned and counted in one step (migrate_plan.go)
	for _, q := range p.cmds {
		c.add(b, loc, q.name, q.args, q.routeKey)
	}
	if routed := fp.learnsRouted() && unknownRouted(b); routed || hasUnknown(b) {
		// Learning asks a server (COMMAND INFO), which may be slow: not
		// counted by the fence, whose switch would wait for it. Nothing
		// ran; the commands are planned again afterwards, by the
		// topology then, the ones that stay unknown keeping the error
		// that says why. The commands routed by the caller's key are
		// learned too when the execution would learn them, to move
		// their keys first (learnsRouted).
		c.endPlan(fp, false)
		c.learnUnknown(ctx, b, func(i int) (string, []any, bool) { q := p.cmds[i]; return q.name, q.args, q.routeKey == nil })
		var failed []error
		if routed {
			failed = c.learnRoutedAhead(ctx, b)
		}
		unknown := unknownErrs(b)
		fp, loc = c.planFence()
		b.reset(len(p.cmds))
		for _, q := range p.cmds {
			c.add(b, loc, q.name, q.args, q.routeKey)
		}
		keepUnknownErrs(b, unknown)
		if fp.learnsRouted() {
			failRouted(b, failed)
		}
	}
	var op *Op
	var replan locator
	if !p.inner {
		ctx, op, fp, replan = c.opStartPlanned(ctx, "PIPELINE", b, true, fp)
	}
	if replan != nil { // the Start hook outlasted the plan (opStartPlanned)
		b.reset(len(p.cmds))
		for _, q := range p.cmds {
			c.add(b, replan, q.name, q.args, q.routeKey)
		}
		c.replanned(op, b)
	}
	clear(p.cmds)
	p.cmds = p.cmds[:0]
	c.plannedHold(fp, "PIPELINE")
	abandoned := c.runPlanned(ctx, b.calls, fp)
	out := make([]Result, len(b.reqs))
	var again *Pipeline // MGETs whose GET parts a server refused (getPartRefused)
	var againAt []int
	for i := range b.reqs {
		if !abandoned && c.getPartRefused(&b.reqs[i]) {
			if again == nil {
				again = c.Pipeline()
			}
			cl := b.reqs[i].whole
			again.Send(cl.name, cl.args...) // copied
			againAt = append(againAt, i)
		}
		out[i].Reply, out[i].Err = b.reqs[i].result()
	}
	if again != nil {
		// Reads of keys only, sent once more without GET parts
		// (noGetParts is set now): no loop. They are part of this
		// operation for the hooks (ctx is its): the caller made one
		// call, whose results do not fail for the refused parts.
		again.inner = true
		if res, err := again.Exec(ctx); err == nil && len(res) == len(againAt) {
			for j, i := range againAt {
				out[i] = res[j]
			}
		}
	}
	c.opFinishPipeline(ctx, op, b, out)
	if abandoned {
		// Workers cut off by the context may still read these calls and
		// their arguments: leave the buffers to them and start afresh.
		p.b = batch{}
		p.args = nil
	} else {
		b.release() // drop the replies so the garbage collector can have them
		clear(p.args)
		p.args = p.args[:0]
	}
	return out, nil
}
