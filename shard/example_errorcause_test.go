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
// node or its connection.
func ExampleErrorCause() {
	node := shard.Node{Addr: "127.0.0.1:6379"}
	for _, err := range []error{
		redis.Error("WRONGTYPE Operation against a key holding the wrong kind of value"),
		redis.Error("user:42:token=s3cret rejected"),
		shard.ErrTxAborted,
		&shard.NodeError{Node: node, Err: shard.ErrNodeDown},
		&shard.NodeError{Node: node, Err: &pool.DialError{Addr: node.Addr, Err: context.DeadlineExceeded}},
		nil,
	} {
		fmt.Printf("%q\n", shard.ErrorCause(err))
	}
	// Output:
	// "WRONGTYPE"
	// "other"
	// "tx_aborted"
	// "node_down"
	// "timeout"
	// ""
}
