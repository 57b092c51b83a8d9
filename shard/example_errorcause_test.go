package shard_test

import (
	"context"
	"fmt"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard"
)

// ErrorCause turns the error of a command into a label of a fixed set:
// the server's code when Redis defines it, "other" for a code a script
// made up (its text may hold anything), and the kind of failure of the
// node or its connection. Here the causes are sorted by who should look
// into them.
func ExampleErrorCause() {
	node := shard.Node{Addr: "127.0.0.1:6379"}
	for _, err := range []error{
		redis.Error("WRONGTYPE Operation against a key holding the wrong kind of value"),
		redis.Error("user:42:token=s3cret rejected"),
		shard.ErrTxAborted,
		&shard.NodeError{Node: node, Err: shard.ErrNodeDown},
		&shard.NodeError{Node: node, Err: &pool.DialError{Addr: node.Addr, Err: context.DeadlineExceeded}},
		&shard.NodeError{Node: node, Err: &pool.AuthError{Addr: node.Addr, Username: "app", Err: redis.Error("WRONGPASS invalid username-password pair")}},
		nil,
	} {
		cause := shard.ErrorCause(err)
		var who string
		switch cause {
		case "":
			who = "nobody"
		case shard.CauseNodeDown, shard.CauseDial, shard.CauseIO, shard.CauseTimeout:
			who = "operations: the node or the network"
		case shard.CauseAuth:
			who = "operations: the credentials"
		case shard.CauseTxAborted, shard.CauseCanceled, shard.CauseClosed:
			who = "nobody: the application's own doing"
		case shard.CauseOther:
			who = "developers: a script or a module"
		default:
			who = "developers: the server's " + cause
		}
		fmt.Printf("%q: %s\n", cause, who)
	}
	// Output:
	// "WRONGTYPE": developers: the server's WRONGTYPE
	// "other": developers: a script or a module
	// "tx_aborted": nobody: the application's own doing
	// "node_down": operations: the node or the network
	// "timeout": operations: the node or the network
	// "auth": operations: the credentials
	// "": nobody
}
