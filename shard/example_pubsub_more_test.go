package shard_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// A long-lived subscription starts empty and changes while it runs:
// channels come and go as the program's interest does. Unsubscribe
// returns at once; its confirmation arrives through Receive like the
// messages do, and once it is there no message of the channel follows.
func ExampleClient_NewSubscription() {
	addrs := redisAddrs(3)
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

	sub, err := client.NewSubscription(shard.SubscriptionOptions{
		BufferSize:   4 * shard.DefaultSubscriptionBuffer, // bursts larger than the default
		PingInterval: 2 * shard.DefaultPingInterval,       // a link where silence is normal
		MaxBackoff:   2 * shard.DefaultMaxRedialBackoff,   // redial a lost node less eagerly
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sub.Close()

	// next returns the next value of the given kind, skipping the others.
	next := func(kind string) any {
		for {
			v, err := sub.Receive(ctx)
			if err != nil {
				return err
			}
			switch m := v.(type) {
			case redis.Message:
				if kind == "message" {
					return m
				}
			case redis.Subscription:
				if m.Kind == kind {
					return m
				}
			}
		}
	}
	show := func(v any) {
		if m, ok := v.(redis.Message); ok {
			fmt.Printf("%s: %s\n", m.Channel, m.Data)
			return
		}
		fmt.Println(v)
	}

	if err := sub.Subscribe(ctx, "orders", "refunds"); err != nil {
		fmt.Println(err)
		return
	}
	client.Do(ctx, "PUBLISH", "orders", "order 1")
	show(next("message"))

	if err := sub.Unsubscribe(ctx, "orders"); err != nil {
		fmt.Println(err)
		return
	}
	if u, ok := next("unsubscribe").(redis.Subscription); ok {
		fmt.Println("left", u.Channel)
	}
	n, err := redis.Int(client.Do(ctx, "PUBLISH", "orders", "order 2"))
	fmt.Println("orders subscribers:", n, err)
	client.Do(ctx, "PUBLISH", "refunds", "refund 1")
	show(next("message"))

	sub.Close()
	_, err = sub.Receive(ctx)
	fmt.Println(errors.Is(err, shard.ErrSubscriptionClosed))
	// Output:
	// orders: order 1
	// left orders
	// orders subscribers: 0 <nil>
	// refunds: refund 1
	// true
}

// A pattern can match channels on any shard, so in ring mode it is
// subscribed on every shard and the streams are merged: the order of
// messages published on different shards is not kept.
func ExampleClient_PSubscribe() {
	addrs := redisAddrs(3)
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

	sub, err := client.PSubscribe(ctx, "orders:*")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sub.Close()
	if err := sub.PSubscribe(ctx, "refunds:*"); err != nil { // more patterns, same connections
		fmt.Println(err)
		return
	}

	for _, region := range []string{"eu", "us", "apac"} {
		client.Do(ctx, "PUBLISH", "orders:"+region, "new order")
	}
	client.Do(ctx, "PUBLISH", "refunds:eu", "refund")
	var got []string
	for len(got) < 4 {
		v, err := sub.Receive(ctx)
		if err != nil {
			fmt.Println(err)
			return
		}
		if m, ok := v.(redis.Message); ok {
			got = append(got, fmt.Sprintf("%s %s: %s", m.Pattern, m.Channel, m.Data))
		}
	}
	slices.Sort(got)
	for _, line := range got {
		fmt.Println(line)
	}

	// Drop every pattern; the subscription stays open for new names.
	fmt.Println(sub.PUnsubscribe(ctx), sub.Stats().Patterns)
	// Output:
	// orders:* orders:apac: new order
	// orders:* orders:eu: new order
	// orders:* orders:us: new order
	// refunds:* refunds:eu: refund
	// <nil> 0
}

// Shard channels (Redis 7) live on the master of their hash slot in a
// cluster: SPUBLISH reaches only that node, and the subscription keeps a
// connection per master it needs, following the slots when they move.
func ExampleClient_SSubscribe() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client, err := shard.New(ctx, shard.Config{Mode: shard.ModeCluster, Seeds: clusterSeeds()})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()

	sub, err := client.SSubscribe(ctx, "cart:{user:1}")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sub.Close()
	if err := sub.SSubscribe(ctx, "cart:{user:2}", "cart:{user:3}"); err != nil {
		fmt.Println(err)
		return
	}
	if err := sub.SUnsubscribe(ctx, "cart:{user:3}"); err != nil {
		fmt.Println(err)
		return
	}

	for _, user := range []string{"1", "2"} {
		n, err := redis.Int(client.Do(ctx, "SPUBLISH", "cart:{user:"+user+"}", "item added"))
		if n != 1 || err != nil {
			fmt.Println("SPUBLISH:", n, err)
		}
	}
	var got []string
	for len(got) < 2 {
		v, err := sub.Receive(ctx)
		if err != nil {
			fmt.Println(err)
			return
		}
		if m, ok := v.(redis.Message); ok {
			got = append(got, fmt.Sprintf("%s: %s", m.Channel, m.Data))
		}
	}
	slices.Sort(got) // different masters: any order
	fmt.Println(got)
	fmt.Println("shard channels:", sub.Stats().ShardChannels)
	// Output:
	// [cart:{user:1}: item added cart:{user:2}: item added]
	// shard channels: 2
}
