package shard_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// With AutoClientName, a client names its connections after the
// topology it routes by, and while it migrates it keeps a named "beacon"
// connection on every old node: CLIENT LIST shows the mover (or an
// operator) which processes are ready for a resharding. Here a two-shard
// ring starts growing to three shards, turns back, and finishes.
func ExampleParseClientName() {
	addrs := redisAddrs(3)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	small := shard.Config{
		Shards: []ring.Shard{{Name: "a", Addr: addrs[0], Weight: 1}, {Name: "b", Addr: addrs[1], Weight: 1}},
		Pool:   pool.Options{ClientName: shard.AutoClientName},
	}
	big := small
	big.Shards = append(slices.Clone(small.Shards), ring.Shard{Name: "c", Addr: addrs[2], Weight: 1})
	client, err := shard.New(ctx, small)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()

	var mu sync.Mutex
	var seen []string
	var instance string // this client's name in CLIENT LIST
	err = client.ForEachShard(ctx, func(ctx context.Context, node shard.Node, conn redis.Conn) error {
		name, err := redis.String(redis.DoContext(conn, ctx, "CLIENT", "GETNAME"))
		n, ok := shard.ParseClientName(name)
		mu.Lock()
		defer mu.Unlock()
		instance = n.Instance
		seen = append(seen, fmt.Sprintf("%s: %v, routes by the small ring: %v", node.Name, ok, n.Topology == shard.TopologyID(small)))
		return err
	})
	slices.Sort(seen) // the shards answer in any order
	fmt.Println(strings.Join(seen, "\n"), err)

	client.Do(ctx, "SET", "visits", 41)
	if err := client.StartMigration(ctx, big); err != nil {
		fmt.Println(err)
		return
	}
	// What the mover sees on an old node: this client's beacon.
	beacons := func(addr string) (n int) {
		conn, err := redis.Dial("tcp", addr)
		if err != nil {
			fmt.Println(err)
			return 0
		}
		defer conn.Close()
		list, err := redis.String(conn.Do("CLIENT", "LIST"))
		if err != nil {
			fmt.Println(err)
			return 0
		}
		for line := range strings.Lines(list) {
			for field := range strings.FieldsSeq(line) {
				name, isName := strings.CutPrefix(field, "name=")
				cn, ok := shard.ParseClientName(name)
				if isName && ok && cn.Instance == instance && cn.Migrating && cn.From == shard.TopologyID(small) && cn.To == shard.TopologyID(big) {
					n++
				}
			}
		}
		return n
	}
	fmt.Println("beacons on a:", beacons(addrs[0]))
	// Alone on these shards, the client arms its migration itself; a
	// deployment of many processes runs shardis reshard --arm instead.
	if err := client.ArmMigration(); err != nil {
		fmt.Println(err)
		return
	}

	// The key moves to its new owner, if that changed, before INCR runs.
	visits, err := redis.Int(client.Do(ctx, "INCR", "visits"))
	var me *shard.MigrateError
	if errors.As(err, &me) {
		fmt.Printf("could not move %s from %s to %s: %v\n", me.Key, me.From, me.To, me.Err)
	}
	fmt.Println("visits:", visits, err)

	// Trouble: route by the small ring again. A key moves back on first
	// use; the mover, run in the reverse direction, brings back the rest
	// before the migration ends.
	fmt.Println(client.AbortMigration(ctx))
	visits, err = redis.Int(client.Do(ctx, "INCR", "visits"))
	fmt.Println("visits:", visits, err)
	// ... shardis reshard from the big ring to the small one ...
	fmt.Println(client.FinishMigration())
	err = client.FinishMigration()
	fmt.Println(errors.Is(err, shard.ErrMigration), err)
	// Output:
	// a: true, routes by the small ring: true
	// b: true, routes by the small ring: true <nil>
	// beacons on a: 1
	// visits: 42 <nil>
	// <nil>
	// visits: 43 <nil>
	// <nil>
	// true shardis: migration: no migration is on
}

// versionedRouter is a Router of the program's own (here one that adds
// nothing to the ring it wraps) that names its placement: every process
// running the same version of it places keys alike.
type versionedRouter struct{ shard.Router }

func (versionedRouter) TopologyID() string { return "orders-ring-v2" }

// A Router that implements TopologyIDer names its placement itself;
// without it, TopologyID hashes the router's node addresses.
func ExampleTopologyIDer() {
	rr, err := shard.NewRingRouter(ring.Config{Shards: []ring.Shard{
		{Name: "a", Addr: "10.0.0.1:6379", Weight: 1},
		{Name: "b", Addr: "10.0.0.2:6379", Weight: 1},
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	var r shard.Router = versionedRouter{rr}
	if named, ok := r.(shard.TopologyIDer); ok {
		fmt.Println(named.TopologyID())
	}
	fmt.Println(shard.TopologyID(shard.Config{Router: r}))
	// Output:
	// orders-ring-v2
	// orders-ring-v2
}
