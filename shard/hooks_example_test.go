package shard_test

import (
	"context"
	"fmt"

	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// Hooks see each command with the node that served it, the number of keys
// and how it ended; statements hide passwords.
func ExampleHooks() {
	addrs := redisAddrs(2)
	ctx := context.Background()
	cfg := shard.Config{
		Shards: []ring.Shard{{Name: "a", Addr: addrs[0], Weight: 1}, {Name: "b", Addr: addrs[1], Weight: 1}},
		Hooks: &shard.Hooks{
			Command: func(ctx context.Context, ev *shard.CommandEvent) {
				fmt.Printf("%q: %d key(s), %s\n", ev.Statement(64), ev.Keys(), ev.Outcome)
			},
		},
	}
	c, err := shard.New(ctx, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	c.Do(ctx, "SET", "user:1", "Ada")
	c.Do(ctx, "INCR", "user:1")
	c.DoKey(ctx, "user:1", "AUTH", "app", "secret")
	// Output:
	// "SET user:1 Ada": 1 key(s), ok
	// "INCR user:1": 1 key(s), server_error
	// "AUTH ? ?": 0 key(s), server_error
}
