package shard_test

import (
	"context"
	"fmt"
	"log"
	"slices"
	"strings"
	"sync"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/shard"
)

// A process in migration mode from a two-shard ring to a three-shard
// one: every key is routed by the new ring, and a key whose owner changed
// is moved from the old ring before its command runs.
func ExampleMigration() {
	ctx := context.Background()
	addrs := redisAddrs(3) // "host:port" of three redis-servers
	from, err := shard.ParseURL("redis-ring://" + strings.Join(addrs[:2], ",") + "?names=a,b&client_name=auto")
	if err != nil {
		log.Fatal(err)
	}
	to, err := shard.ParseURL("redis-ring://" + strings.Join(addrs, ",") + "?names=a,b,c&client_name=auto")
	if err != nil {
		log.Fatal(err)
	}
	// The counter, as the processes on the old ring left it: on shard a.
	old, err := shard.New(ctx, from)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := old.Do(ctx, "SET", "visits", 41); err != nil {
		log.Fatal(err)
	}
	old.Close()

	to.Migration = &shard.Migration{From: &from}
	c, err := shard.New(ctx, to)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	// Alone on these servers, the process arms the fence itself; in a
	// deployment of many processes the mover does (reshard.Move).
	if err := c.ArmMigration(); err != nil {
		log.Fatal(err)
	}
	// INCR continues the counter: the key moves to its new owner, shard
	// c, before the command runs.
	visits, err := redis.Int(c.Do(ctx, "INCR", "visits"))
	fmt.Println("visits:", visits, err)
	onC, err := redis.Dial("tcp", addrs[2])
	if err != nil {
		log.Fatal(err)
	}
	defer onC.Close()
	fmt.Println(redis.String(onC.Do("GET", "visits")))
	// Output:
	// visits: 42 <nil>
	// 42 <nil>
}

// A live ring client starts a migration at run time, and finishes it once
// the mover (shardis reshard) has moved every key.
func ExampleClient_StartMigration() {
	ctx := context.Background()
	addrs := redisAddrs(3) // "host:port" of three redis-servers
	cfg, err := shard.ParseURL("redis-ring://" + strings.Join(addrs[:2], ",") + "?names=a,b")
	if err != nil {
		log.Fatal(err)
	}
	c, err := shard.New(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Do(ctx, "SET", "visits", 41); err != nil {
		log.Fatal(err)
	}
	bigger, err := shard.ParseURL("redis-ring://" + strings.Join(addrs, ",") + "?names=a,b,c")
	if err != nil {
		log.Fatal(err)
	}
	if err := c.StartMigration(ctx, bigger); err != nil {
		log.Fatal(err)
	}
	info, _ := c.Migration()
	fmt.Println("waiting for the fence:", info.Phase == shard.PhaseWaiting)
	// ... the mover arms the fence (alone here, the client does it) and
	// moves the keys; on trouble, c.AbortMigration(ctx) turns back ...
	if err := c.ArmMigration(); err != nil {
		log.Fatal(err)
	}
	visits, err := redis.Int(c.Do(ctx, "INCR", "visits")) // moved to shard c first
	fmt.Println("visits:", visits, err)
	if err := c.FinishMigration(); err != nil {
		log.Fatal(err)
	}
	_, migrating := c.Migration()
	visits, err = redis.Int(c.Do(ctx, "GET", "visits")) // by the three-shard ring alone
	fmt.Println("migrating:", migrating, "visits:", visits, err)
	// Output:
	// waiting for the fence: true
	// visits: 42 <nil>
	// migrating: false visits: 42 <nil>
}

// Every connection of a process carries its instance ID in its name, so
// that the mover can tell whose beacons it sees in CLIENT LIST.
func ExampleClient_InstanceID() {
	ctx := context.Background()
	addrs := redisAddrs(2) // "host:port" of two redis-servers
	cfg, err := shard.ParseURL("redis-ring://" + strings.Join(addrs, ",") + "?names=a,b&client_name=auto")
	if err != nil {
		log.Fatal(err)
	}
	c, err := shard.New(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	var mu sync.Mutex
	var seen []string
	err = c.ForEachShard(ctx, func(ctx context.Context, node shard.Node, conn redis.Conn) error {
		name, err := redis.String(redis.DoContext(conn, ctx, "CLIENT", "GETNAME"))
		n, _ := shard.ParseClientName(name)
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, fmt.Sprintf("%s: named with this instance: %v", node.Name, n.Instance == c.InstanceID()))
		return err
	})
	slices.Sort(seen) // the shards answer in any order
	fmt.Println(strings.Join(seen, "\n"), err)
	// Output:
	// a: named with this instance: true
	// b: named with this instance: true <nil>
}

// A Sentinel shard's Node.Addr names the shard, not a server: NodeAddr
// says which server its commands reach now (its verified master), for a
// tool that talks to the nodes through connections of its own.
func ExampleClient_NodeAddr() {
	ctx := context.Background()
	sentinels, master := sentinelAddrs() // the Sentinels' "host:port", and the master set they watch
	cfg, err := shard.ParseURL("redis-ring+sentinel://" + strings.Join(sentinels, ",") + "?shards=orders=" + master)
	if err != nil {
		log.Fatal(err)
	}
	c, err := shard.New(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	for _, n := range c.Nodes() {
		addr, err := c.NodeAddr(n)
		if err != nil {
			fmt.Printf("%s: %v\n", n, err) // a Sentinel shard without a verified master yet
			continue
		}
		// A connection of the tool's own to the server that serves the shard.
		conn, err := redis.Dial("tcp", addr)
		if err != nil {
			log.Fatal(err)
		}
		role, err := redis.Values(conn.Do("ROLE"))
		conn.Close()
		if err != nil || len(role) == 0 {
			log.Fatal(err)
		}
		fmt.Printf("%s is reached at a %s\n", n.Addr, role[0])
	}
	// Output:
	// sentinel/orders is reached at a master
}
