package shard_test

import (
	"context"
	"fmt"

	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// Operation names a command for a metric label or a span: the table's
// commands and module commands (MODULE.COMMAND, the first
// MaxModuleOperations of them) by their own name in upper case, anything
// else as OtherOperation, so that a typo or a name built from data cannot
// grow the series without bound.
func Example_operationNames() {
	addrs := redisAddrs(1)
	ctx := context.Background()
	hooks := &shard.Hooks{
		Command: func(ctx context.Context, ev *shard.CommandEvent) {
			op := ev.Operation()
			fmt.Printf("%-12s -> %s (other: %t)\n", ev.Name, op, op == shard.OtherOperation)
		},
	}
	client, err := shard.New(ctx, shard.Config{
		Shards:              []ring.Shard{{Addr: addrs[0], Weight: 1}},
		Hooks:               hooks,
		DisableAutoPipeline: true,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()

	client.Do(ctx, "set", "doc:1", "{}")
	client.DoKey(ctx, "doc:1", "JSON.GET", "doc:1") // no module here: the server refuses it
	client.DoKey(ctx, "doc:1", "GETT", "doc:1")     // a typo
	fmt.Println("module names kept:", shard.MaxModuleOperations)
	// Output:
	// set          -> SET (other: false)
	// JSON.GET     -> JSON.GET (other: false)
	// GETT         -> OTHER (other: true)
	// module names kept: 64
}
