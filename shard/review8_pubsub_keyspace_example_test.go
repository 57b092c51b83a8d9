package shard_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

func ExampleClient_NewKeyspaceSubscription() {
	addrs := redisAddrs(2)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
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

	events, err := client.NewKeyspaceSubscription(shard.KeyspaceOptions{Enable: "E$"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer events.Close()
	// A shard that cannot be reached now does not end the subscription:
	// the others deliver their events, and it is configured and
	// subscribed once it answers.
	err = events.PSubscribe(ctx, "__keyevent@*__:set")
	var down *shard.NodeError
	switch {
	case errors.As(err, &down):
		log.Printf("not yet on %s: %v", down.Node.Addr, err)
	case err != nil:
		fmt.Println(err)
		return
	}

	client.Do(ctx, "SET", "cart:7", "x")
	for {
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
	// set cart:7
}
