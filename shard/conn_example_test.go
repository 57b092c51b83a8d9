package shard_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// redigo's transaction pattern works on Client.Conn when the keys share a
// node ({tag}); across nodes it is refused before anything runs.
func ExampleClient_Conn_transaction() {
	addrs := redisAddrs(3)

	ctx := context.Background()
	cfg := shard.Config{Hash: ring.Murmur3}
	for i, addr := range addrs {
		cfg.Shards = append(cfg.Shards, ring.Shard{Name: fmt.Sprintf("shard-%d", i), Addr: addr, Weight: 1})
	}
	client, err := shard.New(ctx, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()

	conn := client.Conn()
	defer conn.Close()
	conn.Send("MULTI")
	conn.Send("INCR", "{cart:7}items")
	conn.Send("INCRBY", "{cart:7}total", 250)
	counts, err := redis.Ints(conn.Do("EXEC"))
	fmt.Println(counts, err)

	// "a" and "c" live on different shards of this ring.
	conn.Send("MULTI")
	conn.Send("INCR", "a")
	conn.Send("INCR", "c")
	_, err = conn.Do("EXEC")
	fmt.Println(errors.Is(err, shard.ErrCrossShard))
	n, err := conn.Do("EXISTS", "a", "c")
	fmt.Println(n, err)
	// Output:
	// [1 250] <nil>
	// true
	// 0 <nil>
}

// A Conn's optimistic transaction (WATCH, read, MULTI ... EXEC) whose
// watching connection was lost before MULTI is refused with ErrWatchLost,
// with nothing of it sent: the caller watches and reads again, and runs
// it again itself (a Conn never does so on its own).
func ExampleErrWatchLost() {
	ctx := context.Background()
	client, err := shard.New(ctx, shard.Config{Hash: ring.Murmur3, Shards: []ring.Shard{
		{Name: "shard-0", Addr: redisAddrs(1)[0], Weight: 1},
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	conn := client.Conn()
	defer conn.Close()
	for attempt := 0; attempt < 3; attempt++ {
		conn.Send("WATCH", "balance")
		n, err := redis.Int(conn.Do("GET", "balance"))
		if err != nil && !errors.Is(err, redis.ErrNil) {
			fmt.Println(err)
			return
		}
		conn.Send("MULTI")
		conn.Send("SET", "balance", n+10)
		reply, err := conn.Do("EXEC")
		if errors.Is(err, shard.ErrWatchLost) || err == nil && reply == nil {
			continue // nothing ran (lost watch, or a watched key changed): watch, read and try again
		}
		fmt.Println(reply, err)
		return
	}
	// Output:
	// [OK] <nil>
}
