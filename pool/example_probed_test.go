package pool_test

import (
	"context"
	"fmt"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/pool"
)

// GetProbed also returns closed, which tells, without a round trip,
// whether the server has closed the connection (here another client
// kills it): a caller about to write what must not run blind sends
// nothing on it, instead of a command whose outcome it could not know.
func ExampleSet_GetProbed() {
	addr, stop := redisServer()
	defer stop()
	set, err := pool.NewSet(pool.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer set.Close()
	ctx := context.Background()

	c, abort, closed, err := set.GetProbed(ctx, addr, false)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	defer abort()
	id, err := redis.Int64(c.Do("CLIENT", "ID"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("closed:", closed())

	admin, err := set.Get(ctx, addr)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer admin.Close()
	fmt.Println(admin.Do("CLIENT", "KILL", "ID", id))
	fmt.Println("closed:", closed())
	// Output:
	// closed: false
	// 1 <nil>
	// closed: true
}
