package shard

import (
	"context"
	"errors"
	"fmt"

	"github.com/gomodule/redigo/redis"
)

// ForEachShard calls fn once for every node the router serves keys from,
// in parallel, each with a connection to that node (returned to the pool
// when fn returns). Use it for keyless commands (FLUSHALL, INFO, SCRIPT
// LOAD, ...). The error joins every node's error, each a *NodeError.
func (c *Client) ForEachShard(ctx context.Context, fn func(ctx context.Context, node Node, conn redis.Conn) error) error {
	if c.closed.Load() {
		return ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("shardis: %w", err)
	}
	nodes := c.router.Nodes()
	errs := make([]error, len(nodes))
	done := make(chan struct{}, len(nodes))
	for i, n := range nodes {
		go func(i int, n Node) {
			defer func() { done <- struct{}{} }()
			conn, err := c.pools.Get(ctx, n.Addr)
			if err != nil {
				errs[i] = &NodeError{Node: n, Err: err}
				return
			}
			defer conn.Close()
			if err := fn(ctx, n, conn); err != nil {
				errs[i] = &NodeError{Node: n, Err: err}
			}
		}(i, n)
	}
	for range nodes {
		<-done
	}
	return errors.Join(errs...)
}
