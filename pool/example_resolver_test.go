package pool_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/pool"
)

// A node whose address moves (a Sentinel-monitored master) is kept under
// a name: each dial asks the resolver where the node is now. Whatever
// watches Sentinel stores the master's address; until it knows one, the
// resolver says so with ErrNoAddr. After a failover, Remove starts the
// name's pools over so that no connection keeps talking to the old
// master.
func ExampleSet_SetResolver() {
	oldMaster, stopOld := redisServer()
	defer stopOld()
	newMaster, stopNew := redisServer()
	defer stopNew()

	set, err := pool.NewSet(pool.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer set.Close()

	var master atomic.Pointer[string] // written by the Sentinel watcher
	err = set.SetResolver("sentinel/mymaster", func() (string, error) {
		if addr := master.Load(); addr != nil {
			return *addr, nil
		}
		return "", pool.ErrNoAddr
	})
	if err != nil {
		fmt.Println(err)
		return
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	whoAnswers := func() {
		c, err := set.Get(ctx, "sentinel/mymaster")
		if err != nil {
			fmt.Println("not yet:", errors.Is(err, pool.ErrNoAddr))
			return
		}
		defer c.Close()
		info, err := redis.String(c.Do("INFO", "server"))
		if err != nil {
			fmt.Println(err)
			return
		}
		for _, a := range []struct{ name, addr string }{{"old", oldMaster}, {"new", newMaster}} {
			_, p, _ := strings.Cut(a.addr, ":")
			if strings.Contains(info, "tcp_port:"+p+"\r\n") {
				fmt.Println("talking to the", a.name, "master")
			}
		}
	}

	whoAnswers() // Sentinel not asked yet
	master.Store(&oldMaster)
	whoAnswers()
	master.Store(&newMaster) // a failover
	if err := set.Remove("sentinel/mymaster"); err != nil {
		fmt.Println(err)
		return
	}
	whoAnswers()
	// Output:
	// not yet: true
	// talking to the old master
	// talking to the new master
}
