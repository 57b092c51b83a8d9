package pool_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/gomodule/redigo/redis"
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

// Borrow a connection to one node, use it and give it back. This example
// needs a Redis server on 127.0.0.1:6379, so it has no checked output.
func ExampleSet_Get() {
	set, err := pool.NewSet(pool.Options{MaxActive: 8, Wait: true, ClientName: "example"})
	if err != nil {
		log.Fatal(err)
	}
	defer set.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	c, err := set.Get(ctx, "127.0.0.1:6379")
	var dialErr *pool.DialError
	switch {
	case errors.As(err, &dialErr):
		log.Printf("node %s is unreachable: %v", dialErr.Addr, dialErr.Err)
		return
	case errors.Is(err, pool.ErrAuth):
		log.Printf("check the credentials: %v", err)
		return
	case err != nil:
		log.Print(err)
		return
	}
	defer c.Close() // returns the connection to the pool

	visits, err := redis.Int(c.Do("INCR", "visits"))
	if err != nil {
		log.Print(err)
		return
	}
	fmt.Println("visits:", visits)
}
