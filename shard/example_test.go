package shard_test

import (
	"context"
	"fmt"
	"log"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// startExampleServers starts real redis-server processes for the examples.
func startExampleServers(n int) []*redistest.Server {
	servers, err := redistest.StartN(n, redistest.Options{})
	if err != nil {
		log.Fatal(err)
	}
	return servers
}

func stopAll(servers []*redistest.Server) {
	for _, s := range servers {
		s.Stop()
	}
}

func ExampleNew() {
	servers := startExampleServers(3)
	defer stopAll(servers)

	ctx := context.Background()
	cfg := shard.Config{Hash: ring.Murmur3}
	for i, s := range servers {
		cfg.Shards = append(cfg.Shards, ring.Shard{Name: fmt.Sprintf("shard-%d", i), Addr: s.Addr, Weight: 1})
	}
	client, err := shard.New(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	if _, err := client.Do(ctx, "SET", "user:1000:name", "Ada"); err != nil {
		log.Fatal(err)
	}
	name, err := redis.String(client.Do(ctx, "GET", "user:1000:name"))
	fmt.Println(name, err)

	// Keys with one {tag} live on one shard, so multi-key commands work.
	client.Do(ctx, "SADD", "{user1000}.following", "a", "b")
	client.Do(ctx, "SADD", "{user1000}.followers", "b", "c")
	common, err := redis.Strings(client.Do(ctx, "SINTER", "{user1000}.following", "{user1000}.followers"))
	fmt.Println(common, err)
	// Output:
	// Ada <nil>
	// [b] <nil>
}

func ExampleClient_Pipeline() {
	servers := startExampleServers(3)
	defer stopAll(servers)
	ctx := context.Background()
	cfg, err := shard.ParseURL(fmt.Sprintf("redis-ring://%s,%s,%s", servers[0].Addr, servers[1].Addr, servers[2].Addr))
	if err != nil {
		log.Fatal(err)
	}
	client, err := shard.New(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	p := client.Pipeline()
	p.Send("SET", "a", "1")
	p.Send("INCR", "a")
	p.Send("MSET", "b", "x", "c", "y") // split over the shards that own b and c
	p.Send("MGET", "a", "b", "c")      // merged back in key order
	results, err := p.Exec(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range results {
		v, _ := redis.Values(r.Reply, nil)
		if v != nil {
			s, _ := redis.Strings(v, nil)
			fmt.Println(s)
			continue
		}
		fmt.Println(r.Reply, r.Err)
	}
	// Output:
	// OK <nil>
	// 2 <nil>
	// OK <nil>
	// [2 x y]
}

func ExampleClient_Tx() {
	servers := startExampleServers(2)
	defer stopAll(servers)
	ctx := context.Background()
	cfg, _ := shard.ParseURL(fmt.Sprintf("redis-ring://%s,%s", servers[0].Addr, servers[1].Addr))
	client, err := shard.New(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	client.Do(ctx, "MSET", "{acct}alice", 100, "{acct}bob", 0)

	replies, err := client.Tx(ctx, []string{"{acct}alice", "{acct}bob"}, func(tx *shard.Tx) error {
		tx.Queue("DECRBY", "{acct}alice", 30)
		return tx.Queue("INCRBY", "{acct}bob", 30)
	})
	fmt.Println(replies, err)
	// Output:
	// [70 30] <nil>
}

func ExampleParseURL() {
	cfg, err := shard.ParseURL("redis-ring://app:secret@10.0.0.1:6379,10.0.0.2:6379?hash=jedis&tag=none&names=a,b")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(cfg.Mode, cfg.Hash, cfg.Shards[0].Name, cfg.Shards[1].Addr, cfg.Pool.Username)
	// Output:
	// ring jedis a 10.0.0.2:6379 app
}
