package shard

import (
	"context"
	"errors"
	"fmt"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/errtext"
	"github.com/shardis/shardis/pool"
)

// ForEachShard calls fn once for every node the router serves keys from,
// in parallel, each with a connection to that node, which is fn's alone
// until fn returns. Use it for keyless commands (FLUSHALL, INFO, SCRIPT
// LOAD, ...). A ring shard that HealthOptions.AutoEject took out is one of
// them (its keys come back with it, and a SCRIPT LOAD or FLUSHALL that
// skipped it would be missed then): while it cannot be reached its call
// fails with its *NodeError, so that the error says it was not reached,
// where Scan passes over it. The error joins every node's error, each a *NodeError
// (its Unwrap() []error returns them, in the order of the nodes); its
// text says how many nodes failed and lists them, one a line:
//
//	shardis: ForEachShard: 2 of 3 nodes failed:
//	node shard-1 (10.0.0.2:6379): dial tcp 10.0.0.2:6379: connect: connection refused
//	node shard-2 (10.0.0.3:6379): ERR unknown command ...
//
// On a Sentinel shard whose master cannot be reached or refuses the
// connection (a failover under way), fn, which has not run, waits for
// the new master within SentinelOptions.FailoverWait, as a command does
// (then the *NodeError wraps a *RetryError). A fn that ran and failed is
// never run again, as it may have written: its error, like that of a
// dead master without FailoverWait, says that a failover may be under way.
//
// fn may do anything with its connection, MONITOR, SUBSCRIBE, SELECT or
// CLIENT SETNAME included: every command sent on it is noted (and
// counted in the node's NodeStats.Commands, as a Do's is), and when fn
// returns the connection goes back to the pool only as a fresh one is. An
// open transaction is discarded (DISCARD, UNWATCH); a connection whose
// state changed otherwise is closed. The connection must not be used after
// fn returns (it then fails every call).
//
// A blocking command sent on it (BLPOP, XREAD BLOCK, WAIT, ...) waits for
// its reply as Client.Do's does: for the read timeout plus the time it
// asked the server to block, without limit for a timeout of 0, where any
// other reply is waited for within the read timeout (Do, DoContext,
// Receive, ReceiveContext; DoWithTimeout and ReceiveWithTimeout keep the
// timeout given). Close ends the wait, and so does DoContext's or
// ReceiveContext's context.
//
// The hooks (Config.Hooks) see what fn sends as they see a Conn's
// commands, on the node the connection goes to and under fn's ctx (or
// the context given to DoContext): each Do (DoContext, DoWithTimeout) is
// an operation of its command with a Command event; the commands queued
// with Send and flushed at once (or sent by Do("")) are one, reported once
// Receive has read their replies (with a Pipeline event when there are
// several). Replies read past those (MONITOR's feed, pub/sub messages)
// are not reported; a command whose reply was not read when fn returned
// is reported failed with an error matching ErrConnClosed.
//
// fn runs on goroutines of the client's. One that panics does not stop
// the others nor the process: its panic is that node's error, a
// *NodeError wrapping a *PanicError with the panic's value and stack, and
// its connection is closed. fn may call Close: Close then does not wait
// for fn's goroutine, and ForEachShard returns once every fn has.
func (c *Client) ForEachShard(ctx context.Context, fn func(ctx context.Context, node Node, conn redis.Conn) error) error {
	return c.forEach(ctx, "ForEachShard", c.shardNodes(), fn)
}

// ForEachMaster is ForEachShard under its cluster-mode name: fn runs once
// for every master that serves slots.
func (c *Client) ForEachMaster(ctx context.Context, fn func(ctx context.Context, node Node, conn redis.Conn) error) error {
	return c.forEach(ctx, "ForEachMaster", c.shardNodes(), fn)
}

// ForEachNode calls fn for every node: in cluster mode the masters and then
// their replicas (plain connections, without READONLY); in ring mode every
// shard. During a migration it visits what ForEachShard visits, the nodes
// that hold keys in either topology (a ring's shards, a cluster's
// masters), and not a cluster's replicas until the migration ends.
func (c *Client) ForEachNode(ctx context.Context, fn func(ctx context.Context, node Node, conn redis.Conn) error) error {
	nodes := c.shardNodes()
	if r := c.cl(); r != nil && c.mig.Load() == nil {
		nodes = r.AllNodes()
	}
	return c.forEach(ctx, "ForEachNode", nodes, fn)
}

// forEachName is the Callback of a ForEachShard function's PanicError.
const forEachName = "ForEachShard"

// forEach runs fn on nodes for the function name (which heads the text
// of the error).
func (c *Client) forEach(ctx context.Context, name string, nodes []Node, fn func(ctx context.Context, node Node, conn redis.Conn) error) error {
	if err := checkContext(ctx); err != nil {
		return err
	}
	if c.closed.Load() {
		return ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("shardis: %w", err)
	}
	errs := make([]error, len(nodes))
	done := make(chan struct{}, len(nodes))
	for i, n := range nodes {
		go func(i int, n Node) {
			defer func() { done <- struct{}{} }()
			conn, err := c.borrowForEach(ctx, n)
			if err != nil {
				errs[i] = err
				return
			}
			defer conn.release()
			if j, ok := c.nodes.lookup(n.Addr); ok {
				// What fn sends counts in NodeStats.Commands, as a Do's,
				// and reaches the hooks as a Conn's (hooks_lent.go).
				conn.commands = &c.nodes.get(j).commands
				conn.hooks = c.lendHooks(ctx, j)
				if conn.hooks != nil {
					conn.hooks.server = c.dialedServer(n, conn.conn)
				}
			}
			err = callUserErr(c, forEachName, func() error { return fn(ctx, n, conn) })
			if _, ok := err.(*PanicError); ok {
				conn.markDirty() // fn stopped anywhere: closed, not pooled
			}
			if err != nil {
				// fn's own error: a READONLY reply (a demoted master)
				// counts, not whatever else fn returns. fn is not run
				// again (it may have written): its error says that the
				// shard may be failing over.
				if sh := c.sentinelShardOf(n); sh != nil && c.sentinelTxFailover(ctx, sh.node, err) != nil {
					err = errtext.Errorf("%w (Sentinel shard %s: its master failed or refused: a failover may be under way; the function is not run again)", err, sh.cfg.Name)
				}
				errs[i] = &NodeError{Node: n, Err: err}
				c.noteSentinelFailure(ctx, n.Addr, err)
			}
		}(i, n)
	}
	for range nodes {
		<-done
	}
	failed := 0
	for _, err := range errs {
		if err != nil {
			failed++
		}
	}
	return errtext.Join(fmt.Sprintf("shardis: %s: %d of %d nodes failed", name, failed, len(nodes)), errs...)
}

// borrowForEach borrows a connection to n for a ForEachShard function,
// which has not run yet: on a Sentinel shard whose master is unreachable
// or refuses it (a failover under way), it waits for the new master
// within SentinelOptions.FailoverWait, as a command does, and borrows
// again. The error is a *NodeError; one that waited in vain wraps a
// *RetryError (Command "ForEachShard") that says so.
func (c *Client) borrowForEach(ctx context.Context, n Node) (*trackedConn, error) {
	var w sentinelTxWait
	for attempt := 0; ; attempt++ {
		conn, err := c.borrowTracked(ctx, n.Addr)
		if err == nil {
			return conn, nil
		}
		j, known := c.nodes.lookup(n.Addr)
		if errors.Is(err, pool.ErrClosed) {
			return nil, &NodeError{Node: n, Err: err} // Close came first (another node's fn, say); err says ErrClosed (borrowTracked)
		}
		if known {
			c.noteFailure(ctx, j, err) // as for a Do's (Stats, health)
		}
		ne := &NodeError{Node: n, Err: err}
		c.noteSentinelFailure(ctx, n.Addr, ne)
		sh := c.sentinelShardOf(n)
		if sh == nil {
			return nil, ne
		}
		retry, ferr := c.retrySentinelTx(ctx, j, attempt, ne, txNotRun, &w, forEachName)
		switch {
		case retry:
			continue
		case ferr != nil:
			return nil, &NodeError{Node: n, Err: ferr}
		case c.sentinelTxFailover(ctx, j, ne) != nil:
			// No FailoverWait: it fails at once, as a command does.
			return nil, &NodeError{Node: n, Err: errtext.Errorf("%w (Sentinel shard %s: its master failed: a failover may be under way)", err, sh.cfg.Name)}
		}
		return nil, ne
	}
}
