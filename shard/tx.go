package shard

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/cluster"
)

// ErrTxAborted means EXEC did not run the transaction because a watched
// key changed. Run the transaction again if that is what you want.
var ErrTxAborted = errors.New("shardis: transaction aborted: a watched key changed")

// Tx is one attempt of a transaction: commands sent with Do run at once on
// the transaction's connection (reads under WATCH); commands queued with
// Queue run atomically between MULTI and EXEC. A Tx is valid only inside
// the function passed to Client.Tx.
type Tx struct {
	ctx    context.Context
	conn   redis.Conn
	loc    locator
	group  int
	queued []queued
}

// Do runs one command now on the transaction's node. Its keys must be in
// the transaction's slot (cluster mode) or on its shard (ring mode).
// MULTI, EXEC and DISCARD are refused (Tx sends them); a command that
// changes the connection's state (CLIENT SETNAME, SELECT, ...) gets the
// connection closed when the transaction ends instead of pooled.
func (tx *Tx) Do(name string, args ...any) (any, error) {
	if err := tx.check(name, args); err != nil {
		return nil, err
	}
	return redis.DoContext(tx.conn, tx.ctx, name, args...)
}

// Queue adds a command to run between MULTI and EXEC. Its keys must be in
// the transaction's slot or shard.
func (tx *Tx) Queue(name string, args ...any) error {
	if err := tx.check(name, args); err != nil {
		return err
	}
	tx.queued = append(tx.queued, queued{name: name, args: args})
	return nil
}

func (tx *Tx) check(name string, args []any) error {
	if err := txOwnCommand(name); err != nil {
		return err
	}
	keys, err := commandKeys(name, args)
	if err != nil {
		return err
	}
	for _, k := range keys {
		if _, g, err := tx.loc.locate(k); err != nil {
			return err
		} else if g != tx.group {
			return &CrossShardError{Command: strings.ToUpper(name), Keys: []KeyOwner{
				{Key: keyString(k), Owner: tx.loc.groupLabel(g)},
				{Key: "(transaction)", Owner: tx.loc.groupLabel(tx.group)},
			}}
		}
	}
	return nil
}

// commandKeys returns the key arguments of a command.
func commandKeys(name string, args []any) ([]any, error) {
	info := lookupCommand(name)
	if info == nil {
		return nil, fmt.Errorf("%w %q", ErrUnknownCommand, name)
	}
	pos, err := info.KeyPositions(args, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadCommand, err)
	}
	keys := make([]any, len(pos))
	for i, p := range pos {
		keys[i] = args[p]
	}
	return keys, nil
}

// Tx runs a transaction over keys, which must all live in one slot
// (cluster mode) or on one shard (ring mode): WATCH keys, call fn (which
// may read with tx.Do and queues writes with tx.Queue), then MULTI, the
// queued commands and EXEC on that node. It returns EXEC's replies, one
// per queued command. A watched key that changed gives ErrTxAborted.
//
// In cluster mode, when the slot is redirected before EXEC (MOVED, ASK,
// TRYAGAIN, CLUSTERDOWN), the whole transaction — fn included — runs again
// on the right node, within the retry budget. A transaction is never split
// over nodes: keys on different slots fail with a *CrossShardError before
// anything is sent.
func (c *Client) Tx(ctx context.Context, keys []string, fn func(tx *Tx) error) ([]any, error) {
	if err := checkContext(ctx); err != nil {
		return nil, err
	}
	if c.closed.Load() {
		return nil, ErrClosed
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%w: a transaction needs at least one key", ErrBadCommand)
	}
	args := make([]any, len(keys))
	for i, k := range keys {
		args[i] = k
	}
	var (
		last    string
		backoff = 5 * time.Millisecond
		start   = time.Now()
	)
	for attempt := 0; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("shardis: %w", err)
		}
		node, group, err := c.loc.locate(keys[0])
		if err != nil {
			return nil, err
		}
		for _, k := range keys[1:] {
			if _, g, err := c.loc.locate(k); err != nil {
				return nil, err
			} else if g != group {
				return nil, crossShardError(c.loc, "WATCH", args, allPositions(len(args)))
			}
		}
		reply, err := c.txOnce(ctx, node, group, args, fn)
		var re redis.Error
		if c.cl == nil || !errors.As(err, &re) {
			return reply, err
		}
		code := cluster.ErrorCode(string(re))
		switch code {
		case "MOVED", "ASK", "TRYAGAIN", "CLUSTERDOWN", "LOADING", "MASTERDOWN", "READONLY":
		default:
			return reply, err
		}
		last = string(re)
		if attempt+1 > c.clusterOpts.MaxRedirects || time.Since(start) > c.clusterOpts.MaxRetryWait {
			return nil, &RetryError{Command: "MULTI/EXEC", Attempts: attempt + 1, Last: last, Err: err}
		}
		if rd, ok := cluster.ParseRedirect(last, c.nodes.get(node).node.Addr); ok && rd.Kind == cluster.Moved {
			c.applyMoved(rd.Slot, rd.Addr)
			c.refresh(ctx, false)
			continue
		}
		// ASK and the rest: the slot is moving or the cluster is busy;
		// wait a little and ask for the topology again.
		c.refresh(ctx, true)
		t := time.NewTimer(min(backoff, 100*time.Millisecond))
		backoff *= 2
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
}

func allPositions(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	return p
}

// txOnce runs one attempt of a transaction on node.
func (c *Client) txOnce(ctx context.Context, node, group int, keys []any, fn func(tx *Tx) error) ([]any, error) {
	ns := c.nodes.get(node)
	if ns.down.Load() {
		return nil, &NodeError{Node: ns.node, Err: ErrNodeDown}
	}
	conn, err := c.borrowTracked(ctx, ns.node.Addr)
	if err != nil {
		return nil, &NodeError{Node: ns.node, Err: err}
	}
	// Back to the pool as a fresh connection is: DISCARD or UNWATCH when
	// fn or a send failed, closed when tx.Do changed the connection.
	defer conn.release()
	if _, err := redis.DoContext(conn, ctx, "WATCH", keys...); err != nil {
		return nil, err
	}
	tx := &Tx{ctx: ctx, conn: conn, loc: c.loc, group: group}
	if err := fn(tx); err != nil {
		return nil, err
	}
	if err := conn.Send("MULTI"); err != nil {
		return nil, &NodeError{Node: ns.node, Err: err}
	}
	for _, q := range tx.queued {
		if err := conn.Send(q.name, q.args...); err != nil {
			return nil, &NodeError{Node: ns.node, Err: err}
		}
	}
	reply, err := redis.DoContext(conn, ctx, "EXEC")
	if err != nil {
		var re redis.Error
		if errors.As(err, &re) {
			return nil, re
		}
		return nil, &NodeError{Node: ns.node, Err: err}
	}
	if reply == nil {
		return nil, ErrTxAborted
	}
	vals, err := redis.Values(reply, nil)
	if err != nil {
		return nil, fmt.Errorf("shardis: EXEC: %w", err)
	}
	return vals, nil
}
