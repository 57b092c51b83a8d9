package pool_test

import (
	"context"
	"fmt"
	"time"

	"github.com/gomodule/redigo/redis"
)

// GetProbed suits a caller that keeps a connection across idle spells:
// before it writes again, closed tells, without a round trip, whether the
// server has closed the connection meanwhile (here an operator's CLIENT
// KILL of every normal connection but its own), so that the command goes
// out on a fresh connection instead.
func ExampleSet_GetProbed() {
	addr, set, stop := serverAndSet()
	if set == nil {
		return
	}
	defer stop()
	ctx := context.Background()

	c, abort, closed, err := set.GetProbed(ctx, addr, false)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(redis.String(c.Do("PING")))
	fmt.Println("closed:", closed())

	admin, err := redis.Dial("tcp", addr)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer admin.Close()
	fmt.Println(redis.Int(admin.Do("CLIENT", "KILL", "TYPE", "normal")))
	// The server's close is on its way; it is seen as soon as it arrives.
	for wait := time.Now().Add(5 * time.Second); !closed() && time.Now().Before(wait); {
		time.Sleep(time.Millisecond)
	}
	fmt.Println("closed:", closed())
	abort() // never lent again
	c.Close()
	// Output:
	// PONG <nil>
	// closed: false
	// 1 <nil>
	// closed: true
}
