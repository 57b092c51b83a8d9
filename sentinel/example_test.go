package sentinel_test

import (
	"context"
	"fmt"
	"time"

	"github.com/shardis/shardis/sentinel"
)

// Find the current master of a set and follow its failovers.
func ExampleClient() {
	c, err := sentinel.New("mymaster", []string{"127.0.0.1:26379", "127.0.0.1:26380"}, sentinel.Options{DialTimeout: 200 * time.Millisecond})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if addr, from, err := c.MasterAddr(ctx); err == nil {
		fmt.Println("master", addr, "according to", from)
	}
	w := c.Watch(func(sentinelAddr string, ev sentinel.SwitchMaster) {
		fmt.Println("failover:", ev.OldAddr, "->", ev.NewAddr)
	})
	defer w.Close()
}

func ExampleParseSwitchMaster() {
	ev, err := sentinel.ParseSwitchMaster("mymaster 10.0.0.1 6379 10.0.0.2 6379")
	fmt.Println(ev.Master, ev.OldAddr, ev.NewAddr, err)
	// Output: mymaster 10.0.0.1:6379 10.0.0.2:6379 <nil>
}

// Follow the failovers of every master set of the Sentinels, and ask for
// the master again when a subscription comes back after a loss: a
// failover announced meanwhile was missed.
func ExampleClient_WatchAllWith() {
	c, err := sentinel.New("mymaster", []string{"127.0.0.1:26379"}, sentinel.Options{DialTimeout: 200 * time.Millisecond})
	if err != nil {
		fmt.Println(err)
		return
	}
	w := c.WatchAllWith(sentinel.WatchHandlers{
		Switch: func(sentinelAddr string, ev sentinel.SwitchMaster) {
			fmt.Println("failover of", ev.Master, "to", ev.NewAddr)
		},
		Resubscribed: func(sentinelAddr string) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			if addr, _, err := c.MasterAddr(ctx); err == nil {
				fmt.Println("master", addr)
			}
		},
	})
	defer w.Close()
	if err := w.Err(); err != nil {
		fmt.Println("not subscribed to every Sentinel:", err)
	}
}
