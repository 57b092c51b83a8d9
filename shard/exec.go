package shard

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gomodule/redigo/redis"
)

// execute runs calls and, in cluster mode, follows redirects and retries
// until each call has its final result.
func (c *Client) execute(ctx context.Context, calls []*call) {
	c.run(ctx, calls)
	if c.cl != nil {
		c.retryCluster(ctx, calls)
	}
}

// run sends every routed call (node >= 0, err == nil) to its node and
// stores each reply or error in the call. Calls for one node go out as one
// pipeline on one connection; nodes are served in parallel. A failure of
// one node touches only that node's calls.
func (c *Client) run(ctx context.Context, calls []*call) {
	first, single := -1, true
	for _, cl := range calls {
		if cl.err != nil || cl.node < 0 {
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
		return
	}
	if single && ctx.Done() == nil {
		// The common case: everything for one node and nothing to watch
		// but the deadline, which the reads honour themselves.
		c.roundTrip(ctx, first, calls, nil)
		return
	}
	c.runParallel(ctx, calls)
}

// group is the share of a batch that goes to one node. A worker owns its
// results until it hands the group back on the done channel.
type group struct {
	node    int
	calls   []*call
	results []Result
}

func (c *Client) runParallel(ctx context.Context, calls []*call) {
	byNode := map[int]*group{}
	var order []*group
	for _, cl := range calls {
		if cl.err != nil || cl.node < 0 {
			continue
		}
		g := byNode[cl.node]
		if g == nil {
			g = &group{node: cl.node}
			byNode[cl.node] = g
			order = append(order, g)
		}
		g.calls = append(g.calls, cl)
	}
	done := make(chan *group, len(order))
	for _, g := range order {
		g.results = make([]Result, len(g.calls))
		c.inflight.Add(1)
		go func(g *group) {
			defer c.inflight.Done()
			c.roundTrip(ctx, g.node, g.calls, g.results)
			done <- g
		}(g)
	}
	finished := make(map[*group]bool, len(order))
	for len(finished) < len(order) {
		select {
		case g := <-done:
			finished[g] = true
			for i, cl := range g.calls {
				cl.reply, cl.err = g.results[i].Reply, g.results[i].Err
			}
		case <-ctx.Done():
			err := fmt.Errorf("shardis: %w", ctx.Err())
			for _, g := range order {
				if !finished[g] {
					for _, cl := range g.calls {
						cl.reply, cl.err = nil, err
					}
				}
			}
			return
		}
	}
}

// roundTrip sends calls to node over one connection and reads the replies.
// With out == nil the results go straight into the calls; otherwise into
// out, which the caller copies later.
func (c *Client) roundTrip(ctx context.Context, node int, calls []*call, out []Result) {
	ns := c.nodes.get(node)
	set := func(i int, reply any, err error) {
		if out == nil {
			calls[i].reply, calls[i].err = reply, err
		} else {
			out[i] = Result{Reply: reply, Err: err}
		}
	}
	failFrom := func(start int, err error) {
		nerr := &NodeError{Node: ns.node, Err: err}
		for i := start; i < len(calls); i++ {
			set(i, nil, nerr)
		}
	}
	ns.commands.Add(int64(len(calls)))
	if ns.down.Load() {
		ns.errors.Add(int64(len(calls)))
		failFrom(0, ErrNodeDown)
		return
	}
	conn, err := c.conn(ctx, ns)
	if err != nil {
		c.noteFailure(ctx, node, err)
		failFrom(0, err)
		return
	}
	defer conn.Close()
	asking := false
	for _, cl := range calls {
		if cl.asking {
			asking = true
			if err := conn.Send("ASKING"); err != nil {
				c.noteFailure(ctx, node, err)
				failFrom(0, err)
				return
			}
		}
		if err := conn.Send(cl.name, cl.args...); err != nil {
			c.noteFailure(ctx, node, err)
			failFrom(0, err)
			return
		}
	}
	if err := conn.Flush(); err != nil {
		c.noteFailure(ctx, node, err)
		failFrom(0, err)
		return
	}
	timeout, err := c.replyTimeout(ctx, calls)
	if err != nil {
		failFrom(0, err)
		return
	}
	for i := range calls {
		if asking && calls[i].asking {
			if _, err := redis.ReceiveWithTimeout(conn, timeout); err != nil {
				var re redis.Error
				if !errors.As(err, &re) {
					err = contextCause(ctx, err)
					c.noteFailure(ctx, node, err)
					failFrom(i, err)
					return
				}
			}
		}
		reply, err := redis.ReceiveWithTimeout(conn, timeout)
		if err != nil {
			var re redis.Error
			if errors.As(err, &re) {
				set(i, nil, re)
				continue
			}
			err = contextCause(ctx, err)
			c.noteFailure(ctx, node, err)
			failFrom(i, err)
			return
		}
		set(i, reply, nil)
	}
	c.noteSuccess(node)
}

// conn borrows a connection to the node: a READONLY one for replica reads.
func (c *Client) conn(ctx context.Context, ns *nodeState) (redis.Conn, error) {
	if ns.readOnly {
		return c.pools.GetReadOnly(ctx, ns.node.Addr)
	}
	return c.pools.Get(ctx, ns.node.Addr)
}

// replyTimeout is how long to wait for each reply: the pool's read timeout,
// cut short by the context's deadline. A batch with a blocking command
// (BLPOP, XREAD BLOCK, ...) waits as long as the context allows.
func (c *Client) replyTimeout(ctx context.Context, calls []*call) (time.Duration, error) {
	t := c.readTimeout
	for _, cl := range calls {
		if cl.info != nil && cl.info.Flags&commandBlocking != 0 {
			t = 0
			break
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

// contextCause marks an I/O error that the caller's context caused (its
// deadline cut the read short, or it was cancelled) so that errors.Is finds
// the context error.
func contextCause(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("%w (%v)", cerr, err)
	}
	if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
		return fmt.Errorf("%w (%v)", context.DeadlineExceeded, err)
	}
	return err
}
