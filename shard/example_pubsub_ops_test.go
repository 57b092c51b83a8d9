package shard_test

import (
	"context"
	"fmt"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// Ping checks a subscription end to end, for a readiness probe say: every
// connection answers with a redis.Pong carrying the data, in line with
// the messages. (The subscription's own health PINGs never show.)
func ExampleSubscription_Ping() {
	addrs := redisAddrs(2)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client, err := shard.New(ctx, shard.Config{Shards: []ring.Shard{
		{Addr: addrs[0], Weight: 1}, {Addr: addrs[1], Weight: 1},
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	sub, err := client.Subscribe(ctx, "jobs")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sub.Close()

	if err := sub.Ping(ctx, "probe-1"); err != nil {
		fmt.Println(err)
		return
	}
	for {
		v, err := sub.Receive(ctx)
		if err != nil {
			fmt.Println("not ready:", err)
			return
		}
		if p, ok := v.(redis.Pong); ok && p.Data == "probe-1" {
			fmt.Println("ready")
			return
		}
	}
	// Output:
	// ready
}

// Buffered tells how far the application is behind the servers. The
// buffer holds at most BufferSize messages: beyond that new ones are
// dropped (and counted) rather than stalling the connections.
func ExampleSubscription_Buffered() {
	addrs := redisAddrs(1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client, err := shard.New(ctx, shard.Config{Shards: []ring.Shard{{Addr: addrs[0], Weight: 1}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	sub, err := client.NewSubscription(shard.SubscriptionOptions{BufferSize: 3})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sub.Close()
	if err := sub.Subscribe(ctx, "ticks"); err != nil {
		fmt.Println(err)
		return
	}

	// A consumer that stalls while five messages come in.
	for i := 1; i <= 5; i++ {
		client.Do(ctx, "PUBLISH", "ticks", i)
	}
	for sub.Stats().Received < 5 { // wait until the servers' messages are all read
		if ctx.Err() != nil {
			fmt.Println(ctx.Err())
			return
		}
		time.Sleep(time.Millisecond)
	}
	fmt.Println("behind by", sub.Buffered(), "dropped", sub.Stats().Dropped)
	for sub.Buffered() > 0 {
		v, err := sub.Receive(ctx)
		if err != nil {
			fmt.Println(err)
			return
		}
		if m, ok := v.(redis.Message); ok {
			fmt.Printf("tick %s\n", m.Data)
		}
	}
	// Output:
	// behind by 3 dropped 2
	// tick 1
	// tick 2
	// tick 3
}

// Keyspace notifications come from every shard through one subscription;
// without Patterns it listens to DefaultKeyspacePatterns: both the
// notification on the key and the one on the event.
func ExampleKeyspaceOptions() {
	addrs := redisAddrs(2)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client, err := shard.New(ctx, shard.Config{Shards: []ring.Shard{
		{Addr: addrs[0], Weight: 1}, {Addr: addrs[1], Weight: 1},
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()

	fmt.Println(shard.DefaultKeyspacePatterns)
	events, err := client.SubscribeKeyspace(ctx, shard.KeyspaceOptions{
		Enable:       "KE$", // keyspace and keyevent notifications of string commands
		Subscription: shard.SubscriptionOptions{BufferSize: 1 << 16},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer events.Close()

	client.Do(ctx, "SET", "user:1", "Ada")
	for seen := 0; seen < 2; {
		v, err := events.Receive(ctx)
		if err != nil {
			fmt.Println(err)
			return
		}
		if m, ok := v.(redis.Message); ok {
			ev, _ := shard.ParseKeyspaceEvent(m)
			fmt.Printf("%s %s -> %s of %s\n", m.Channel, m.Data, ev.Event, ev.Key)
			seen++
		}
	}
	// Output:
	// [__keyspace@*__:* __keyevent@*__:*]
	// __keyspace@0__:user:1 set -> set of user:1
	// __keyevent@0__:set user:1 -> set of user:1
}
