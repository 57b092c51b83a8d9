package shard_test

import (
	"fmt"

	"github.com/shardis/shardis/shard"
)

// MaxRedirects bounds the MOVED and ASK hops one command follows; 0
// means DefaultMaxRedirects. The mover of package reshard follows as many
// redirects of a cluster for one batch of keys.
func ExampleClusterOptions() {
	opts := shard.ClusterOptions{} // MaxRedirects 0: the default
	hops := opts.MaxRedirects
	if hops == 0 {
		hops = shard.DefaultMaxRedirects
	}
	fmt.Println(hops)
	// Output:
	// 5
}
