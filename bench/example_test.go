package bench_test

import (
	"fmt"

	"github.com/shardis/shardis/bench"
	"github.com/shardis/shardis/ring"
)

// The three baselines route the same key, each by its own rules.
func Example() {
	shards := []ring.Shard{
		{Name: "a", Addr: "127.0.0.1:7000", Weight: 1},
		{Name: "b", Addr: "127.0.0.1:7001", Weight: 1},
		{Name: "c", Addr: "127.0.0.1:7002", Weight: 1},
	}
	tm, err := bench.NewTreeMap(shards)
	if err != nil {
		fmt.Println(err)
		return
	}
	rv := bench.NewRendezvous([]string{"a", "b", "c"})
	r, err := ring.New(ring.Config{Algorithm: ring.Jedis, Shards: shards})
	if err != nil {
		fmt.Println(err)
		return
	}
	key := "user:00000042:pf"
	fmt.Println("treemap agrees with ring.Jedis:", tm.Locate(key) == r.Locate(key))
	fmt.Println("rendezvous:", rv.Locate(key))
	fmt.Println("jump over 3 buckets:", bench.Jump(key, 3))
	fmt.Println("jump over 0 buckets:", bench.Jump(key, 0))
	// Output:
	// treemap agrees with ring.Jedis: true
	// rendezvous: 2
	// jump over 3 buckets: 0
	// jump over 0 buckets: -1
}
