package pool_test

import (
	"context"
	"fmt"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/pool"
)

// A process that changes what it does says so in CLIENT LIST: the idle
// connections are renamed at once, a borrowed one when it is given back,
// and new ones are dialed with the new name.
func ExampleSet_SetClientName() {
	addr, stop := redisServer()
	defer stop()
	set, err := pool.NewSet(pool.Options{ClientName: "worker:topology-a"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer set.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	getName := func() string {
		conn, err := set.Get(ctx, addr)
		if err != nil {
			return err.Error()
		}
		defer conn.Close()
		name, err := redis.String(conn.Do("CLIENT", "GETNAME"))
		if err != nil {
			return err.Error()
		}
		return name
	}
	fmt.Println(getName())
	if err := set.SetClientName(ctx, "worker:topology-b"); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(set.ClientName(), getName())
	fmt.Println(set.SetClientName(ctx, "not a name"))
	// Output:
	// worker:topology-a
	// worker:topology-b worker:topology-b
	// shardis: bad pool options: ClientName "not a name" may hold only printable ASCII without spaces
}
