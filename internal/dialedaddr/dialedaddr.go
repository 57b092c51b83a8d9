// Package dialedaddr tells the address a connection of package pool was
// dialed to: for a pool whose address is resolved at each dial (a
// Sentinel shard's master), the server its commands go to, which may no
// longer be the address the name resolves to now.
//
// The connection is reached through the redigo pool's wrapper, which
// passes ReceiveContext's context through untouched: given Query, a
// connection of package pool answers with its Reply at once, reading
// nothing, and without an allocation.
package dialedaddr

import (
	"context"

	"github.com/gomodule/redigo/redis"
)

type queryKey struct{}

// Query is the context that asks a connection of package pool for its
// Reply (its ReceiveContext compares its context with Query first).
var Query = context.WithValue(context.Background(), queryKey{}, true)

// Reply is what a connection of package pool answers to Query: the
// address it was dialed to.
type Reply struct{ Addr string }

// Of returns the address conn was dialed to, or "" when conn does not
// tell (closed, or not a connection of package pool). conn must be a
// connection of package pool or a redigo pool's wrapper of one: another
// connection would take Query for a real ReceiveContext.
func Of(conn redis.Conn) string {
	cc, ok := conn.(redis.ConnWithContext)
	if !ok {
		return ""
	}
	r, err := cc.ReceiveContext(Query)
	if err != nil {
		return ""
	}
	if a, ok := r.(*Reply); ok {
		return a.Addr
	}
	return ""
}
