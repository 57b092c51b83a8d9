package ring_test

import (
	"encoding/json"
	"fmt"

	"github.com/shardis/shardis/ring"
)

// A Shard prints and encodes (String, %#v, MarshalJSON, MarshalYAML) with
// credentials pasted into its address shown as xxxxx, so that a shard
// list can be logged; New refuses such an address, and the ring places
// keys by the address as it is.
func ExampleShard_MarshalJSON() {
	shards := []ring.Shard{
		{Name: "a", Addr: "user:secret@10.0.0.1:6379", Weight: 1},
		{Addr: "10.0.0.2:6379", Weight: 2},
	}
	j, _ := json.Marshal(shards)
	fmt.Println(string(j))
	fmt.Println(shards)
	fmt.Printf("%#v\n", shards[0])
	fields, _ := shards[0].MarshalYAML() // what a YAML encoder writes
	fmt.Printf("%+v\n", fields)
	// Output:
	// [{"Name":"a","Addr":"xxxxx@10.0.0.1:6379","Weight":1},{"Name":"","Addr":"10.0.0.2:6379","Weight":2}]
	// [xxxxx@10.0.0.1:6379:1 a 10.0.0.2:6379:2]
	// ring.Shard{Name:"a", Addr:"xxxxx@10.0.0.1:6379", Weight:1}
	// {Name:a Addr:xxxxx@10.0.0.1:6379 Weight:1}
}
