package pool_test

import (
	"context"
	"sync/atomic"

	"github.com/shardis/shardis/pool"
)

// A node whose address moves (a Sentinel-monitored master): its pools are
// keyed by a name, and each dial asks where the node is now.
func ExampleSet_SetResolver() {
	s, err := pool.NewSet(pool.Options{})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	var current atomic.Pointer[string]
	addr := "127.0.0.1:6379"
	current.Store(&addr)
	if err := s.SetResolver("sentinel/shard-a", func() (string, error) { return *current.Load(), nil }); err != nil {
		panic(err)
	}
	if conn, err := s.Get(context.Background(), "sentinel/shard-a"); err == nil {
		defer conn.Close()
		// ... use conn ...
	}
	// After a failover: point the name elsewhere and start its pools over.
	next := "127.0.0.1:6380"
	current.Store(&next)
	_ = s.Remove("sentinel/shard-a")
}
