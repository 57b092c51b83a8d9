package pool_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
)

// Options print every setting but never the password.
func ExampleOptions_String() {
	opts := pool.Options{
		MaxActive:  16,
		Wait:       true,
		Username:   "app",
		Password:   "correct horse battery staple",
		ClientName: "billing",
	}
	fmt.Println(opts)
	// Output:
	// MaxIdle=0 MaxActive=16 IdleTimeout=0s MaxConnLifetime=0s Wait=true TestOnBorrow=0s DialTimeout=0s ReadTimeout=0s WriteTimeout=0s Username="app" Password=*** DB=0 ClientName="billing" TLS=off ReadOnly=false
}

// Bad options are reported before anything is dialed.
func ExampleNewSet_badOptions() {
	_, err := pool.NewSet(pool.Options{Username: "app"})
	fmt.Println(errors.Is(err, pool.ErrBadOptions))
	fmt.Println(err)
	// Output:
	// true
	// shardis: bad pool options: Username "app" is set without a Password (for a nopass ACL user give any password)
}

// redisServer starts a redis-server for an example and returns its
// address and a function that stops it. In your code, the address is your
// server's.
func redisServer() (addr string, stop func()) {
	s, err := redistest.Start(redistest.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "example server:", err)
		return "127.0.0.1:1", func() {} // refused: the example fails by its output
	}
	return s.Addr, func() { s.Stop() }
}

// Borrow a connection to one node, use it and give it back.
func ExampleSet_Get() {
	addr, stop := redisServer()
	defer stop()

	set, err := pool.NewSet(pool.Options{MaxActive: 8, Wait: true, ClientName: "example"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer set.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	c, err := set.Get(ctx, addr)
	var dialErr *pool.DialError
	switch {
	case errors.As(err, &dialErr):
		fmt.Printf("node %s is unreachable: %v\n", dialErr.Addr, dialErr.Err)
		return
	case errors.Is(err, pool.ErrAuth):
		fmt.Printf("check the credentials: %v\n", err)
		return
	case err != nil:
		fmt.Println(err)
		return
	}
	defer c.Close() // returns the connection to the pool

	for range 3 {
		visits, err := redis.Int(c.Do("INCR", "visits"))
		fmt.Println("visits:", visits, err)
	}
	name, err := redis.String(c.Do("CLIENT", "GETNAME"))
	fmt.Println(name, err)
	// Output:
	// visits: 1 <nil>
	// visits: 2 <nil>
	// visits: 3 <nil>
	// example <nil>
}
