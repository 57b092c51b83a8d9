package shard_test

import (
	"context"
	"fmt"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

func ExampleClient_Subscribe() {
	addrs := redisAddrs(3)

	ctx := context.Background()
	cfg := shard.Config{}
	for _, addr := range addrs {
		cfg.Shards = append(cfg.Shards, ring.Shard{Addr: addr, Weight: 1})
	}
	client, err := shard.New(ctx, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()

	// Each channel is subscribed on the shard its name hashes to; Subscribe
	// returns once every shard involved has confirmed.
	sub, err := client.Subscribe(ctx, "news", "sports", "weather")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sub.Close()

	// PUBLISH through the client goes to the same shard.
	n, err := redis.Int(client.Do(ctx, "PUBLISH", "sports", "goal"))
	fmt.Println("subscribers:", n, err)

	for {
		v, err := sub.Receive(ctx)
		if err != nil {
			fmt.Println(err)
			return
		}
		switch m := v.(type) {
		case redis.Subscription:
			// One confirmation per channel, in any order across shards.
		case redis.Message:
			fmt.Printf("%s: %s\n", m.Channel, m.Data)
			return
		}
	}
	// Output:
	// subscribers: 1 <nil>
	// sports: goal
}

func ExampleClient_SubscribeKeyspace() {
	addrs := redisAddrs(2)

	ctx := context.Background()
	cfg := shard.Config{}
	for _, addr := range addrs {
		cfg.Shards = append(cfg.Shards, ring.Shard{Addr: addr, Weight: 1})
	}
	client, err := shard.New(ctx, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()

	// Key events of every shard through one subscription; Enable turns
	// notifications on with CONFIG SET on every node it connects to.
	events, err := client.SubscribeKeyspace(ctx, shard.KeyspaceOptions{
		Patterns: []string{"__keyevent@*__:expired", "__keyevent@*__:set"},
		Enable:   "Eg$x",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer events.Close()

	client.Do(ctx, "SET", "session:42", "x")
	for range 3 {
		v, err := events.Receive(ctx)
		if err != nil {
			fmt.Println(err)
			return
		}
		if m, ok := v.(redis.Message); ok {
			ev, _ := shard.ParseKeyspaceEvent(m)
			fmt.Println(ev.Event, ev.Key)
			return
		}
	}
	// Output:
	// set session:42
}
