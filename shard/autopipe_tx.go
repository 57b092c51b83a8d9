package shard

import (
	"context"
	"errors"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/shardis/shardis/pool"
)

// autoDoTx sends a transaction to one node: calls are MULTI, the queued
// commands and EXEC, all routed to the same node. When other callers are
// sending to the node at the same moment it goes through the node's
// automatic pipeline, so that the transactions of many callers share one
// write and one read; a caller alone with the node uses a pooled
// connection, as autoDo does.
//
// On the pipeline the writer puts the whole transaction into one batch,
// command after command, so no other caller's command can fall between
// MULTI and EXEC, and the connection is back in the state a fresh one
// has when EXEC has run. Only EXEC's call gets a result there: the
// replies before it (OK, QUEUED) are read and dropped, and a command
// that could not be queued makes EXEC itself fail (EXECABORT).
func (c *Client) autoDoTx(ctx context.Context, calls []*call) (abandoned bool) {
	exec := calls[len(calls)-1]
	p := c.pipe(exec.node)
	if p == nil {
		exec.err = ErrClosed
		return false
	}
	defer p.users.Add(-1)
	if p.users.Add(1) == 1 && !c.alwaysPipe {
		return c.runPooled(ctx, calls)
	}
	return c.autoRoundTrip(ctx, p, exec, calls[:len(calls)-1])
}

// skipReplies reads the n replies of a transaction's commands written
// before its EXEC (MULTI and the queued commands) from conn, due by
// deadline. It returns the error replies among them, by position (nil
// when none came): the server's refusal of a command it would not queue
// (a NOPERM, a wrong number of arguments, a LOADING...), which is why
// EXEC then answers EXECABORT; and first, the first of them, or the
// protocol error that ends the skipping: the server closes the
// connection after it and answers nothing written later. A connection
// failure is returned as err, with got, the number of replies that came
// before it.
func skipReplies(conn redis.Conn, n int, deadline time.Time) (first redis.Error, refused []error, got int, err error) {
	for i := range n {
		if _, err := pool.ReceiveBy(conn, deadline); err != nil {
			var re redis.Error
			if !errors.As(err, &re) {
				return first, refused, i, err
			}
			if refused == nil {
				refused = make([]error, n)
			}
			refused[i] = re
			if first == "" || isProtocolError(re) {
				first = re
			}
			if isProtocolError(re) {
				return first, refused, i + 1, nil
			}
		}
	}
	return first, refused, n, nil
}

// setRefused gives each command of a transaction written before its EXEC
// (pre) the error reply that refused it (refused, by position, from
// skipReplies), as each command of a transaction sent on a pooled
// connection gets its reply, so that the caller sees which command the
// server would not queue and why. It runs on the caller's goroutine,
// once the reply came: a caller that gave up never reads them.
func setRefused(pre []*call, refused []error) {
	if len(refused) != len(pre) {
		return
	}
	for i, err := range refused {
		var re redis.Error
		if errors.As(err, &re) {
			pre[i].err = hideSecretEcho(pre[i].name, pre[i].args, re) // secret_echo.go
		}
	}
}
