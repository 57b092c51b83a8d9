package ring_test

import (
	"fmt"

	"github.com/shardis/shardis/ring"
)

func Example() {
	shards, err := ring.ParseShards("127.0.0.1:6381:2 shard-a,127.0.0.1:6382:1 shard-b,127.0.0.1:6383:1 shard-c,127.0.0.1:6384:5 shard-d")
	if err != nil {
		fmt.Println(err)
		return
	}
	// Place keys exactly as Jedis ShardedJedis would.
	r, err := ring.New(ring.Config{Algorithm: ring.Jedis, Shards: shards})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, key := range []string{"a", "b", "foo"} {
		i := r.Locate(key)
		fmt.Println(key, i, shards[i].Label())
	}
	// Output:
	// a 2 shard-c
	// b 1 shard-b
	// foo 3 shard-d
}

func ExampleNew_twemproxy() {
	// The same servers a twemproxy pool lists under "servers:", with
	// "distribution: ketama" and "hash: fnv1a_64".
	shards, _ := ring.ParseShards("127.0.0.1:6379:1,127.0.0.1:6380:1,127.0.0.1:6381:1")
	r, err := ring.New(ring.Config{Algorithm: ring.Ketama, KeyHash: "fnv1a_64", Shards: shards})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r)
	fmt.Println(shards[r.Locate("a")].Label())
	// Output:
	// ring(ketama, key hash fnv1a_64, tag none, 3 shards, 480 points)
	// 127.0.0.1:6379
}

func ExampleNew_errors() {
	_, err := ring.New(ring.Config{Shards: []ring.Shard{
		{Name: "a", Addr: "10.0.0.1:6379", Weight: 1},
		{Name: "a", Addr: "10.0.0.2:6379", Weight: 1},
	}})
	fmt.Println(err)
	// Output:
	// shardis: duplicate shard: shards 0 and 1 are both called "a"
}

func ExampleDiff() {
	shards, _ := ring.ParseShards("10.0.0.1:6379,10.0.0.2:6379,10.0.0.3:6379,10.0.0.4:6379")
	before, _ := ring.New(ring.Config{Shards: shards[:3]})
	after, _ := ring.New(ring.Config{Shards: shards})
	m := ring.Diff(before, after)
	fmt.Printf("moved %.2f, between old shards %.2f, exact %v\n", m.Moved, m.BetweenSurvivors, m.Exact)
	// Output:
	// moved 0.25, between old shards 0.00, exact true
}

func ExampleRing_Locate() {
	shards, _ := ring.ParseShards("10.0.0.1:6379,10.0.0.2:6379,10.0.0.3:6379")
	r, _ := ring.New(ring.Config{Shards: shards}) // murmur3, Redis Cluster hash tags
	// Keys sharing a hash tag live on the same shard.
	fmt.Println(r.Locate("{user:1000}.following") == r.Locate("{user:1000}.followers"))
	// Output:
	// true
}
