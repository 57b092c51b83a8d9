package pool_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
)

// faultExampleServer starts a redis-server for an example and returns its
// address and a function that stops it. In your code, the address is your
// server's.
func faultExampleServer() (addr string, stop func()) {
	s, err := redistest.Start(redistest.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "example server:", err)
		return "127.0.0.1:1", func() {} // refused: the example fails by its output
	}
	return s.Addr, func() { s.Stop() }
}

// After a node failed (a restart, a reset), retire the connections its
// pool holds: idle ones are closed instead of handed out again, borrowed
// ones when they come back, and MaxActive keeps counting them meanwhile.
func ExampleSet_DropIdle() {
	addr, stop := faultExampleServer()
	defer stop()
	set, err := pool.NewSet(pool.Options{MaxActive: 4, Wait: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer set.Close()
	ctx := context.Background()
	clientID := func() int64 {
		c, err := set.Get(ctx, addr)
		if err != nil {
			fmt.Println(err)
			return -1
		}
		defer c.Close()
		id, _ := redis.Int64(c.Do("CLIENT", "ID"))
		return id
	}
	first := clientID()
	fmt.Println("reused:", clientID() == first)
	set.DropIdle(addr)
	fmt.Println("reused after DropIdle:", clientID() == first)
	// Output:
	// reused: true
	// reused after DropIdle: false
}

// A caller that knows when its replies are due waits for them until then:
// here three pipelined replies must all be in within 500 ms. A reply
// already received is taken whatever the time.
func ExampleReceiveBy() {
	addr, stop := faultExampleServer()
	defer stop()
	set, err := pool.NewSet(pool.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer set.Close()
	c, err := set.Get(context.Background(), addr)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	due := time.Now().Add(500 * time.Millisecond)
	for _, k := range []string{"a", "b", "c"} {
		c.Send("SET", k, k+"!")
	}
	c.Flush()
	for range 3 {
		reply, err := pool.ReceiveBy(c, due)
		fmt.Println(reply, err)
	}
	// Output:
	// OK <nil>
	// OK <nil>
	// OK <nil>
}
