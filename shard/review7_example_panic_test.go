package shard_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/shardis/shardis/shard"
)

// buggyYearRouter puts each year's keys on a node of its own and has a bug: a
// key without a year makes it panic.
type buggyYearRouter struct{ nodes []shard.Node }

func (r buggyYearRouter) Route(key string) (shard.Node, error) {
	if len(key) < 4 {
		panic("buggyYearRouter: no year in " + key)
	}
	return r.nodes[int(key[3]-'0')%len(r.nodes)], nil
}

func (r buggyYearRouter) Nodes() []shard.Node { return r.nodes }

// A panic of code the client runs for the program does not take the
// process down: Route's fails the command it was routing, as a
// *PanicError; a hook's goes to Hooks.Panic.
func ExamplePanicError() {
	addrs := redisAddrs(2)
	ctx := context.Background()
	cfg := shard.Config{
		Router: buggyYearRouter{nodes: []shard.Node{{Name: "even", Addr: addrs[0]}, {Name: "odd", Addr: addrs[1]}}},
		Hooks: &shard.Hooks{
			Finish: func(ctx context.Context, op *shard.Op) {
				if op.Name == "INCR" {
					panic("metrics: no counter for INCR")
				}
			},
			Panic: func(err *shard.PanicError) {
				fmt.Println("recovered:", err.Callback, err.Value)
			},
		},
	}
	c, err := shard.New(ctx, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	_, err = c.Do(ctx, "SET", "x", "1")
	var perr *shard.PanicError
	if errors.As(err, &perr) {
		fmt.Println("SET failed:", perr.Callback, perr.Value)
	}
	n, err := c.Do(ctx, "INCR", "2024:visits")
	fmt.Println("INCR:", n, err)
	// Output:
	// SET failed: Router.Route buggyYearRouter: no year in x
	// recovered: Hooks.Finish metrics: no counter for INCR
	// INCR: 1 <nil>
}
