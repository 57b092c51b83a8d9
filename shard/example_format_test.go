package shard_test

import (
	"fmt"

	"github.com/shardis/shardis/shard"
)

// Every verb prints a Client as its description (passwords as ***),
// never its fields.
func ExampleClient_Format() {
	var c *shard.Client // a client from shard.New prints its configuration
	fmt.Printf("%v | %d | %+v\n", c, c, c)
	// Output: shard.Client(nil) | shard.Client(nil) | shard.Client(nil)
}

// A Pipeline prints as its client's description with every verb.
func ExamplePipeline_Format() {
	var p *shard.Pipeline // client.Pipeline() prints as shard.Pipeline{client: ...}
	fmt.Printf("%x\n", p)
	// Output: shard.Pipeline(nil)
}

// A Scanner prints as its client's description with every verb.
func ExampleScanner_Format() {
	var s *shard.Scanner
	fmt.Printf("%d\n", s)
	// Output: shard.Scanner(nil)
}

// A Subscription prints as its client's description with every verb.
func ExampleSubscription_Format() {
	var s *shard.Subscription
	fmt.Printf("%+v\n", s)
	// Output: shard.Subscription(nil)
}

// A Tx prints as its client's description with every verb.
func ExampleTx_Format() {
	var tx *shard.Tx
	fmt.Printf("%#v\n", tx)
	// Output: shard.Tx(nil)
}
