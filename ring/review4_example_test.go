package ring_test

import (
	"errors"
	"fmt"

	"github.com/shardis/shardis/ring"
)

func ExampleRing_Without() {
	shards, _ := ring.ParseShards("127.0.0.1:6379:1 light,127.0.0.1:6380:100 heavy,127.0.0.1:6381:1 other")
	r, err := ring.New(ring.Config{Algorithm: ring.Ketama, Shards: shards})
	if err != nil {
		fmt.Println(err)
		return
	}
	// "other" is down: take it out, as twemproxy's auto_eject_hosts does.
	// Among the remaining weights (1 of 101) "light" earns no point of its
	// own, which New refuses and Without accepts: it owns no key.
	_, err = ring.New(ring.Config{Algorithm: ring.Ketama, Shards: shards[:2]})
	fmt.Println(errors.Is(err, ring.ErrBadWeight))
	live, err := r.Without(2)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(live.Len(), live.Points())
	for _, key := range []string{"a", "b", "c"} {
		s, _ := live.Shard(live.Locate(key))
		fmt.Println(key, s.Label())
	}
	// Output:
	// true
	// 2 316
	// a heavy
	// b heavy
	// c heavy
}
