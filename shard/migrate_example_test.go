package shard_test

import (
	"context"
	"log"

	"github.com/shardis/shardis/shard"
)

// A process in migration mode from a three-shard ring to a four-shard
// one: every key is routed by the new ring, and a key whose owner changed
// is moved from the old ring before its command runs.
func ExampleMigration() {
	to, err := shard.ParseURL("redis-ring://10.0.0.1:6379,10.0.0.2:6379,10.0.0.3:6379,10.0.0.4:6379?names=a,b,c,d&client_name=auto")
	if err != nil {
		log.Fatal(err)
	}
	from, err := shard.ParseURL("redis-ring://10.0.0.1:6379,10.0.0.2:6379,10.0.0.3:6379?names=a,b,c")
	if err != nil {
		log.Fatal(err)
	}
	to.Migration = &shard.Migration{From: &from}
	c, err := shard.New(context.Background(), to)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	// INCR continues the counter even when it still sits on its old shard.
	if _, err := c.Do(context.Background(), "INCR", "visits"); err != nil {
		log.Fatal(err)
	}
}

// A live ring client starts a migration at run time, and finishes it once
// the mover (shardis reshard) has moved every key.
func ExampleClient_StartMigration() {
	ctx := context.Background()
	cfg, err := shard.ParseURL("redis-ring://10.0.0.1:6379,10.0.0.2:6379?names=a,b")
	if err != nil {
		log.Fatal(err)
	}
	c, err := shard.New(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	bigger, err := shard.ParseURL("redis-ring://10.0.0.1:6379,10.0.0.2:6379,10.0.0.3:6379?names=a,b,c")
	if err != nil {
		log.Fatal(err)
	}
	if err := c.StartMigration(ctx, bigger); err != nil {
		log.Fatal(err)
	}
	// ... the mover runs; on trouble, c.AbortMigration(ctx) turns back ...
	if err := c.FinishMigration(); err != nil {
		log.Fatal(err)
	}
}

// Every connection of a process carries its instance ID in its name, so
// that the mover can tell whose beacons it sees in CLIENT LIST.
func ExampleClient_InstanceID() {
	cfg, err := shard.ParseURL("redis-ring://10.0.0.1:6379,10.0.0.2:6379?names=a,b&client_name=auto")
	if err != nil {
		log.Fatal(err)
	}
	c, err := shard.New(context.Background(), cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	log.Printf("this process's connections are named with instance %s", c.InstanceID())
}

// A Sentinel shard's Node.Addr names the shard, not a server: NodeAddr
// says which server its commands reach now (its verified master), for a
// tool that talks to the nodes through connections of its own.
func ExampleClient_NodeAddr() {
	cfg, err := shard.LoadConfig("sentinel-ring.yaml")
	if err != nil {
		log.Fatal(err)
	}
	c, err := shard.New(context.Background(), cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	for _, n := range c.Nodes() {
		addr, err := c.NodeAddr(n)
		if err != nil {
			log.Printf("%s: %v", n, err) // a Sentinel shard without a verified master yet
			continue
		}
		log.Printf("%s is reached at %s", n, addr)
	}
}
