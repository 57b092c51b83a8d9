package shard

import (
	"fmt"

	"github.com/shardis/shardis/shard/command"
)

// call is one command as it goes over the wire to one node: a user's
// command, or one part of a user's multi-key command after splitting.
type call struct {
	name string
	args []any
	info *command.Info

	node int // index into the client's node table; -1 until routed

	reply any
	err   error
}

// Result is the outcome of one command of a pipeline: its reply, or its
// own error. A server error reply is a redis.Error, exactly as redigo
// returns it; a node that could not be reached gives a *NodeError.
type Result struct {
	Reply any
	Err   error
}

// keyString returns the string form of a key argument for error messages.
func keyString(a any) string {
	s, ok := command.Arg(a)
	if !ok {
		return fmt.Sprintf("%v", a)
	}
	return s
}
