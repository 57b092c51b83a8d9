package pool_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/pool"
)

// A subscription changes its connection for good, so it takes one of its
// own with Dial, set up like the pooled ones (here with a client name),
// and closes it when done; commands go through the pool as usual.
func ExampleSet_Dial() {
	addr, stop := redisServer()
	defer stop()
	set, err := pool.NewSet(pool.Options{ClientName: "notifier", ReadTimeout: 5 * time.Second})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer set.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	conn, err := set.Dial(ctx, addr)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer conn.Close() // never goes back to a pool
	name, err := redis.String(conn.Do("CLIENT", "GETNAME"))
	fmt.Println(name, err)
	psc := redis.PubSubConn{Conn: conn}
	if err := psc.Subscribe("alerts"); err != nil {
		fmt.Println(err)
		return
	}

	publish := func(msg string) {
		c, err := set.Get(ctx, addr)
		if err != nil {
			fmt.Println(err)
			return
		}
		defer c.Close()
		if _, err := c.Do("PUBLISH", "alerts", msg); err != nil {
			fmt.Println(err)
		}
	}
	for {
		switch v := psc.Receive().(type) {
		case redis.Subscription:
			fmt.Println(v.Kind, v.Channel)
			publish("disk full") // subscribed: now it is delivered
		case redis.Message:
			fmt.Printf("%s: %s\n", v.Channel, v.Data)
			return
		case error:
			fmt.Println(v)
			return
		}
	}
	// Output:
	// notifier <nil>
	// subscribe alerts
	// alerts: disk full
}

// A dial hook reports every connection a Set opens, with how long it
// took and whether it failed, for logs or metrics; it never sees the
// password. Connections are reused, so the second Get dials nothing.
func ExampleNewSetWithDialHook() {
	addr, stop := redisServer()
	defer stop()
	var dials atomic.Int64 // the hook may be called concurrently
	hook := func(ctx context.Context, node string, readOnly bool, took time.Duration, err error) {
		dials.Add(1)
		fmt.Printf("dialed the node: %v, read-only: %v, error: %v\n", node == addr, readOnly, err)
	}
	set, err := pool.NewSetWithDialHook(pool.Options{MaxActive: 4}, hook)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer set.Close()
	for range 2 {
		c, err := set.Get(context.Background(), addr)
		if err != nil {
			fmt.Println(err)
			return
		}
		c.Close()
	}
	fmt.Println("dials:", dials.Load())
	// Output:
	// dialed the node: true, read-only: false, error: <nil>
	// dials: 1
}
