package command_test

import (
	"fmt"

	"github.com/shardis/shardis/shard/command"
)

func ExampleEffectOf() {
	for _, call := range [][]any{
		{"GET", "k"},
		{"CLIENT", "SETNAME", "worker-1"},
		{"CLIENT", "REPLY", "OFF"},
		{"SELECT", 2},
		{"MULTI"},
		{"SSUBSCRIBE", "news"},
		{"CLIENT", "KILL", "USER", "worker"},
	} {
		name := call[0].(string)
		fmt.Println(call, "->", command.EffectOf(nil, name, call[1:]))
	}
	// Output:
	// [GET k] -> stateless
	// [CLIENT SETNAME worker-1] -> sets state
	// [CLIENT REPLY OFF] -> exclusive
	// [SELECT 2] -> database
	// [MULTI] -> transaction
	// [SSUBSCRIBE news] -> subscribe
	// [CLIENT KILL USER worker] -> disconnects
}
