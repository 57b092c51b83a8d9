package shard_test

import (
	"context"
	"fmt"

	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// Part tells a node's share of a split multi-key command from a command
// of its own: an MGET over two shards reaches each with one GET, named
// after the MGET, which a tracer gives a span per node.
func ExampleCommandEvent_Part() {
	addrs := redisAddrs(2)
	ctx := context.Background()
	hooks := &shard.Hooks{
		Command: func(ctx context.Context, ev *shard.CommandEvent) {
			fmt.Printf("%s sent as %s to shard %s, part: %t\n", ev.Operation(), ev.Name, ev.Node.Name, ev.Part())
		},
	}
	client, err := shard.New(ctx, shard.Config{
		// The shards' names place the keys: "user:1" is on "b", "user:2"
		// on "a", whatever the addresses.
		Shards:              []ring.Shard{{Name: "a", Addr: addrs[0], Weight: 1}, {Name: "b", Addr: addrs[1], Weight: 1}},
		Hooks:               hooks,
		DisableAutoPipeline: true,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()

	client.Do(ctx, "GET", "user:1")
	client.Do(ctx, "MGET", "user:1", "user:2")
	// Output:
	// GET sent as GET to shard b, part: false
	// MGET sent as GET to shard b, part: true
	// MGET sent as GET to shard a, part: true
}
