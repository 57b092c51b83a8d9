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

// serverAndSet starts a Redis server and a Set with the default options
// for an example: addr is the server's address, stop closes the Set and
// stops the server. It prints the error and returns a nil Set when the
// Set cannot be made.
func serverAndSet() (addr string, set *pool.Set, stop func()) {
	addr, stopServer := redisServer()
	set, err := pool.NewSet(pool.Options{})
	if err != nil {
		fmt.Println(err)
		stopServer()
		return addr, nil, nil
	}
	return addr, set, func() {
		set.Close()
		stopServer()
	}
}

// Zero options mean the package's defaults; Never turns IdleTimeout and
// TestOnBorrow off. Validate reports bad options before anything is dialed.
func ExampleOptions_Validate() {
	fmt.Println(pool.DefaultMaxIdle, pool.DefaultIdleTimeout, pool.DefaultTestOnBorrow)
	fmt.Println(pool.DefaultDialTimeout, pool.DefaultReadTimeout, pool.DefaultWriteTimeout)
	fmt.Println(pool.Options{IdleTimeout: pool.Never, TestOnBorrow: pool.Never}.Validate())
	err := pool.Options{ReadTimeout: -time.Second}.Validate()
	fmt.Println(errors.Is(err, pool.ErrBadOptions))
	// Output:
	// 64 5m0s 1m0s
	// 5s 3s 3s
	// <nil>
	// true
}

// A Set keeps one pool per address: Stats counts its connections, Addrs
// lists the addresses, Pool is the redigo pool itself, Remove closes one.
func ExampleSet_Stats() {
	addr, set, stop := serverAndSet()
	if set == nil {
		return
	}
	defer stop()
	ctx := context.Background()

	c, err := set.Get(ctx, addr)
	if err != nil {
		fmt.Println(err)
		return
	}
	c.Do("SET", "k", "v")
	c.Close() // back to the pool

	// GetAbortable also returns abort, which closes the socket at once,
	// from any goroutine: the connection fails from then on and is never
	// handed out again.
	c2, abort, err := set.GetAbortable(ctx, addr, false)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(redis.String(c2.Do("GET", "k")))
	abort()
	_, err = c2.Do("GET", "k")
	fmt.Println("after abort:", err != nil)
	c2.Close() // a dead connection is dropped, not pooled

	st := set.Stats()[addr]
	fmt.Println("dials:", st.Dials, "active:", st.Active, "idle:", st.Idle)
	fmt.Println(len(set.Addrs()), set.Pool(addr).IdleCount(), set.ReadOnlyPool(addr).ActiveCount())
	fmt.Println(set.Remove(addr), len(set.Addrs()))
	// Output:
	// v <nil>
	// after abort: true
	// dials: 1 active: 0 idle: 0
	// 1 0 0
	// <nil> 0
}

// The errors of a Set say what went wrong: a bad address, refused
// credentials (*AuthError, matching ErrAuth), an unreachable node
// (*DialError), a closed Set or connection. GetReadOnly borrows a
// READONLY connection, which only a Redis Cluster replica accepts.
func ExampleSet_errors() {
	srv, err := redistest.Start(redistest.Options{DefaultPassword: "right-password"})
	if err != nil {
		fmt.Fprintln(os.Stderr, "example server:", err)
		return
	}
	defer srv.Stop()
	ctx := context.Background()

	describe := func(err error) string {
		var authErr *pool.AuthError
		var dialErr *pool.DialError
		switch {
		case err == nil:
			return "ok"
		case errors.Is(err, pool.ErrBadAddr):
			return "bad address"
		case errors.As(err, &authErr): // also errors.Is(err, pool.ErrAuth)
			return "refused credentials of user " + authErr.Username
		case errors.Is(err, pool.ErrClosed):
			return "the set is closed"
		case errors.Is(err, pool.ErrConnClosed), errors.Is(err, pool.ErrProtocol):
			return "the connection failed"
		case errors.As(err, &dialErr):
			// Unreachable, or a setup command refused: here READONLY,
			// which only Redis Cluster replicas accept.
			return "could not set up a connection to the node"
		}
		return "the server said no"
	}

	set, _ := pool.NewSet(pool.Options{Password: "wrong-password", DialTimeout: time.Second})
	_, err = set.Get(ctx, "no-port")
	fmt.Println(describe(err))
	_, err = set.Get(ctx, srv.Addr)
	fmt.Println(describe(err), errors.Is(err, pool.ErrAuth))
	set.Close()
	_, err = set.Get(ctx, srv.Addr)
	fmt.Println(describe(err))

	good, _ := pool.NewSet(pool.Options{Password: "right-password"})
	defer good.Close()
	_, err = good.GetReadOnly(ctx, srv.Addr)
	fmt.Println(describe(err))
	// Output:
	// bad address
	// refused credentials of user default true
	// the set is closed
	// could not set up a connection to the node
}
