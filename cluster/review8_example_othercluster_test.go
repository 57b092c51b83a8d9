package cluster_test

import (
	"errors"
	"fmt"

	"github.com/shardis/shardis/cluster"
)

// A shard.Client's refresh reports a node that answered with the
// topology of another cluster (an address the cluster used now serves
// another one) as a *SeedError wrapping ErrOtherCluster, and does not use
// that answer while a node of the cluster it knows answers. The error
// below is built as such a refresh's.
func ExampleErrOtherCluster() {
	err := fmt.Errorf("shardis: cluster topology: %w", &cluster.SeedError{
		Seed: "10.0.0.4:7000",
		Err:  fmt.Errorf("%w: its 1 nodes share no node ID with the 6 of the table in use", cluster.ErrOtherCluster),
	})
	var seedErr *cluster.SeedError
	fmt.Println(errors.Is(err, cluster.ErrOtherCluster), errors.As(err, &seedErr), seedErr.Seed)
	// Output:
	// true true 10.0.0.4:7000
}
