package shard_test

import (
	"fmt"
	"time"

	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// A ring with one plain shard and two shards behind Sentinel. The
// Sentinel shards are placed by name, so the ring places keys as a plain
// ring with the same names would, whatever their masters' addresses.
func Example_sentinel() {
	cfg := shard.Config{
		Hash: ring.Jedis,
		Shards: []ring.Shard{
			{Name: "shard-a", Addr: "10.0.0.1:6379", Weight: 1},
			{Name: "shard-b", Weight: 1}, // a Sentinel shard: a name, no address
			{Name: "shard-c", Weight: 1},
		},
		Sentinel: shard.SentinelOptions{
			Addrs: []string{"10.0.9.1:26379", "10.0.9.2:26379", "10.0.9.3:26379"},
			Shards: []shard.SentinelShard{
				{Name: "shard-b", MasterName: "master-b"},
				{Name: "shard-c", MasterName: "master-c"},
			},
			FailoverWait: 5 * time.Second,
		},
	}
	fmt.Println(cfg.Validate())

	// The same ring as a URL.
	cfg2, err := shard.ParseURL("redis-ring+sentinel://10.0.9.1:26379,10.0.9.2:26379,10.0.9.3:26379" +
		"?shards=10.0.0.1:6379+shard-a,shard-b=master-b,shard-c=master-c&hash=jedis&failover_wait=5s")
	fmt.Println(err, len(cfg2.Shards), len(cfg2.Sentinel.Shards))

	// shard.New(ctx, cfg) then finds each master through the Sentinels;
	// client.Stats().Sentinel shows each shard's master, replicas and
	// failovers.
	// Output:
	// <nil>
	// <nil> 3 2
}
