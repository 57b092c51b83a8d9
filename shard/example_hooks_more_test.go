package shard_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// Hooks from different places run side by side: here a metrics hook that
// counts failed operations and an error log that keeps each failed
// command's text, bounded in size (and with secrets hidden) by Statement.
func ExampleJoinHooks() {
	addrs := redisAddrs(2)
	ctx := context.Background()

	var failed atomic.Int64
	metrics := &shard.Hooks{
		Finish: func(ctx context.Context, op *shard.Op) {
			if op.Outcome.IsError() {
				failed.Add(1)
			}
		},
	}
	errorLog := &shard.Hooks{
		Command: func(ctx context.Context, ev *shard.CommandEvent) {
			if ev.Outcome.IsError() {
				fmt.Printf("%s: %s\n", ev.Outcome, ev.Statement(40))
			}
		},
	}
	client, err := shard.New(ctx, shard.Config{
		Shards: []ring.Shard{{Addr: addrs[0], Weight: 1}, {Addr: addrs[1], Weight: 1}},
		Hooks:  shard.JoinHooks(metrics, errorLog), // nil ones are skipped
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()

	client.Do(ctx, "SET", "page:home", strings.Repeat("<p>hello</p>", 100))
	client.Do(ctx, "LPUSH", "page:home", strings.Repeat("<p>hello</p>", 100)) // wrong type
	client.Do(ctx, "INCR", "page:home")
	client.Do(ctx, "GET", "page:home")
	fmt.Println("failed operations:", failed.Load())
	// Output:
	// server_error: LPUSH page:home <p>hello</p><p>hello<...
	// server_error: INCR page:home
	// failed operations: 2
}

// A replica whose link to its master is down serves stale data: with
// CheckReplication as the health check, the client marks it down (and up
// again once it is well), and a NodeState hook tells the program.
func ExampleCheckReplication() {
	addrs := redisAddrs(2)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	events := make(chan shard.NodeEvent, 16) // the hook must not block
	client, err := shard.New(ctx, shard.Config{
		Shards: []ring.Shard{{Name: "a", Addr: addrs[0], Weight: 1}, {Name: "b", Addr: addrs[1], Weight: 1}},
		Health: shard.HealthOptions{
			Interval:     50 * time.Millisecond,
			FailureLimit: 2,
			Timeout:      5 * time.Second, // generous: a slow check must not count as a failure
			Check:        shard.CheckReplication,
		},
		Hooks: &shard.Hooks{NodeState: func(ev shard.NodeEvent) {
			select {
			case events <- ev:
			default:
			}
		}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	next := func() {
		select {
		case ev := <-events:
			fmt.Println(ev.Node.Name, ev.Kind, errors.Is(ev.Err, shard.ErrReplicaLinkDown))
		case <-ctx.Done():
			fmt.Println(ctx.Err())
		}
	}

	// The operator's part: shard b becomes a replica of a master that is
	// gone, then a master again.
	replicaOf := func(args ...any) {
		conn, err := redis.Dial("tcp", addrs[1])
		if err != nil {
			fmt.Println(err)
			return
		}
		defer conn.Close()
		if _, err := conn.Do("REPLICAOF", args...); err != nil {
			fmt.Println(err)
		}
	}
	defer replicaOf("NO", "ONE")
	replicaOf("127.0.0.1", 1) // nothing listens there
	next()
	replicaOf("NO", "ONE")
	next()
	// Output:
	// b down true
	// b up false
}

// A custom health check built on CheckPing: it also records how long
// each node took to answer, for a latency gauge.
func ExampleCheckPing() {
	addrs := redisAddrs(2)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	var mu sync.Mutex
	latency := map[string]time.Duration{} // by node name; checks run concurrently
	check := func(ctx context.Context, conn redis.Conn, node shard.Node) error {
		start := time.Now()
		err := shard.CheckPing(ctx, conn, node)
		if err == nil {
			mu.Lock()
			latency[node.Name] = time.Since(start)
			mu.Unlock()
		}
		return err
	}
	client, err := shard.New(ctx, shard.Config{
		Shards: []ring.Shard{{Name: "a", Addr: addrs[0], Weight: 1}, {Name: "b", Addr: addrs[1], Weight: 1}},
		Health: shard.HealthOptions{Interval: 50 * time.Millisecond, Check: check},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()

	for ctx.Err() == nil { // until each node was checked once
		mu.Lock()
		n := len(latency)
		mu.Unlock()
		if n == 2 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	fmt.Println("latency known for", slices.Sorted(maps.Keys(latency)))
	mu.Unlock()
	// Output:
	// latency known for [a b]
}

// A slow-operation log keeps the text of each slow operation, bounded in
// size: Op.Statement for a whole operation, PipelineEvent.Statement for
// one node's part of a pipeline (its commands one per line).
func ExampleHooks_slowLog() {
	addrs := redisAddrs(1)
	ctx := context.Background()
	slow := time.Duration(0) // every operation is slow here; 50ms, say, in production
	client, err := shard.New(ctx, shard.Config{
		Shards: []ring.Shard{{Name: "a", Addr: addrs[0], Weight: 1}},
		Hooks: &shard.Hooks{
			Finish: func(ctx context.Context, op *shard.Op) {
				if op.Duration >= slow {
					fmt.Printf("slow %s: %q\n", op.Name, op.Statement(48))
				}
			},
			Pipeline: func(ctx context.Context, ev *shard.PipelineEvent) {
				if ev.Duration >= slow {
					fmt.Printf("slow part on %s: %d commands, %q\n", ev.Node.Name, ev.Commands, ev.Statement(48))
				}
			},
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()

	p := client.Pipeline()
	p.Send("SET", "session:1", "a-long-session-token")
	p.Send("EXPIRE", "session:1", 3600)
	p.Send("TTL", "session:1")
	if _, err := p.Exec(ctx); err != nil {
		fmt.Println(err)
	}
	client.Do(ctx, "AUTH", "app", "secret") // secrets never show
	// Output:
	// slow part on a: 3 commands, "SET session:1 a-long-session-token\nEXPIRE ses..."
	// slow PIPELINE: "SET session:1 a-long-session-token\nEXPIRE ses..."
	// slow AUTH: "AUTH ? ?"
}
