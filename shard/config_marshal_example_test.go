package shard_test

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// A Config encodes to JSON (MarshalJSON) and YAML (MarshalYAML) field by
// field, so that it can be logged at start-up: a set password is ***,
// credentials pasted into an address are xxxxx, a health check is its
// function's name.
func ExampleConfig_MarshalJSON() {
	cfg := shard.Config{
		Shards: []ring.Shard{{Name: "a", Addr: "user:secret@10.0.0.1:6379", Weight: 1}},
		Pool:   pool.Options{Username: "app", Password: "secret"},
		Health: shard.HealthOptions{Interval: time.Second, Check: shard.CheckReplication},
	}
	j, _ := json.Marshal(cfg)
	var m map[string]any
	_ = json.Unmarshal(j, &m)
	fmt.Println(m["Shards"])
	fmt.Println(m["Pool"].(map[string]any)["Password"])
	fmt.Println(m["Health"].(map[string]any)["Check"])
	fmt.Println(m["Router"])
	// Output:
	// [map[Addr:xxxxx@10.0.0.1:6379 Name:a Weight:1]]
	// ***
	// github.com/shardis/shardis/shard.CheckReplication
	// <nil>
}
