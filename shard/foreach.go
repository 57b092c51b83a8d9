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
// LOAD, ...). The error joins every node's error, each a *NodeError.
//
// fn may do anything with its connection, MONITOR, SUBSCRIBE, SELECT or
// CLIENT SETNAME included: every command sent on it is noted (and
// counted in the node's NodeStats.Commands, as a Do's is), and when fn
// returns the connection goes back to the pool only as a fresh one is. An
// open transaction is discarded (DISCARD, UNWATCH); a connection whose
// state changed otherwise is closed. The connection must not be used after
// fn returns (it then fails every call).
//
// fn runs on goroutines of the client's. One that panics does not stop
// the others nor the process: its panic is that node's error, a
// *NodeError wrapping a *PanicError with the panic's value and stack, and
// its connection is closed. fn may call Close: Close then does not wait
// for fn's goroutine, and ForEachShard returns once every fn has.
func (c *Client) ForEachShard(ctx context.Context, fn func(ctx context.Context, node Node, conn redis.Conn) error) error {
	return c.forEach(ctx, c.shardNodes(), fn)
}

// ForEachMaster is ForEachShard under its cluster-mode name: fn runs once
// for every master that serves slots.
func (c *Client) ForEachMaster(ctx context.Context, fn func(ctx context.Context, node Node, conn redis.Conn) error) error {
	return c.forEach(ctx, c.shardNodes(), fn)
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
	return c.forEach(ctx, nodes, fn)
}

// forEachName is the Callback of a ForEachShard function's PanicError.
const forEachName = "ForEachShard"

func (c *Client) forEach(ctx context.Context, nodes []Node, fn func(ctx context.Context, node Node, conn redis.Conn) error) error {
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
			conn, err := c.borrowTracked(ctx, n.Addr)
			if err != nil {
				if errors.Is(err, pool.ErrClosed) {
					err = errtext.Errorf("%w (%w)", ErrClosed, err) // Close came first (another node's fn, say)
				} else if j, ok := c.nodes.lookup(n.Addr); ok {
					c.noteFailure(ctx, j, err) // as for a Do's (Stats, health)
				}
				errs[i] = &NodeError{Node: n, Err: err}
				c.noteSentinelFailure(ctx, n.Addr, errs[i])
				return
			}
			defer conn.release()
			if j, ok := c.nodes.lookup(n.Addr); ok {
				// What fn sends counts in NodeStats.Commands, as a Do's.
				conn.commands = &c.nodes.get(j).commands
			}
			err = callUserErr(c, forEachName, func() error { return fn(ctx, n, conn) })
			if _, ok := err.(*PanicError); ok {
				conn.markDirty() // fn stopped anywhere: closed, not pooled
			}
			if err != nil {
				errs[i] = &NodeError{Node: n, Err: err}
				// fn's own error: a READONLY reply (a demoted master)
				// counts, not whatever else fn returns.
				c.noteSentinelFailure(ctx, n.Addr, err)
			}
		}(i, n)
	}
	for range nodes {
		<-done
	}
	return errors.Join(errs...)
}
