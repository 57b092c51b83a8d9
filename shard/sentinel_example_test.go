package shard_test

import (
	"fmt"
	"time"

	"go.yaml.in/yaml/v3"

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

// SentinelOptions and SentinelShard encode to JSON (MarshalJSON) and YAML
// (MarshalYAML) field by field, every set password as ***, so that a
// structured log of them never shows the secrets.
func ExampleSentinelOptions_MarshalJSON() {
	o := shard.SentinelOptions{
		Addrs:    []string{"10.0.0.9:26379"},
		Password: "sentinel-s3cret",
		Shards:   []shard.SentinelShard{{Name: "a", Username: "app", Password: "shard-s3cret"}},
	}
	j, _ := o.MarshalJSON()
	fmt.Println(string(j))
	fields, _ := o.Shards[0].MarshalYAML() // what a YAML encoder writes
	y, _ := yaml.Marshal(fields)
	fmt.Print(string(y))
	// Output:
	// {"Shards":[{"Name":"a","MasterName":"","Addrs":null,"Username":"app","Password":"***","TLSConfig":null}],"Addrs":["10.0.0.9:26379"],"Username":"","Password":"***","TLSConfig":null,"ReadFrom":"","RefreshInterval":0,"MinRefreshInterval":0,"Timeout":0,"FailoverWait":0}
	// name: a
	// mastername: ""
	// addrs: []
	// username: app
	// password: '***'
	// tlsconfig: null
}
