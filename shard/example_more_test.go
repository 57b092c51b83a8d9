package shard_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// A RingRouter is the ring mode's routing on its own, with no I/O: Route
// and Index find a key's node, Eject and Restore take a node out of the
// ring and put it back (what AutoEject does when a shard goes down).
func ExampleNewRingRouter() {
	rr, err := shard.NewRingRouter(ring.Config{Shards: []ring.Shard{
		{Name: "a", Addr: "10.0.0.1:6379", Weight: 1},
		{Name: "b", Addr: "10.0.0.2:6379", Weight: 1},
		{Name: "c", Addr: "10.0.0.3:6379", Weight: 1},
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	node, _ := rr.Route("user:1000")
	i, _ := rr.Index("user:1000")
	j, _ := rr.IndexBytes([]byte("user:1000"))
	fmt.Println(node.Name, i == j, len(rr.Nodes()), rr.Ring().Len())

	fmt.Println(rr.Eject(i), rr.Ejected(i))
	moved, _ := rr.Route("user:1000")
	fmt.Println(moved.Name != node.Name)
	fmt.Println(rr.Restore(i), rr.Ejected(i))
	back, _ := rr.Route("user:1000")
	fmt.Println(back == node)
	// Output:
	// c true 3 3
	// <nil> true
	// true
	// <nil> false
	// true
}

// Validate checks a Config without connecting; RingConfig is the ring it
// describes.
func ExampleConfig_Validate() {
	cfg := shard.Config{Hash: ring.Jedis, Shards: []ring.Shard{
		{Name: "a", Addr: "10.0.0.1:6379", Weight: 2},
		{Name: "b", Addr: "10.0.0.2:6379", Weight: 1},
	}}
	fmt.Println(cfg.Validate(), cfg.RingConfig().Algorithm)

	cfg.Shards[1].Addr = "localhost:6379"
	cfg.Shards[0].Addr = "127.0.0.1:6379"
	err := cfg.Validate()
	fmt.Println(errors.Is(err, shard.ErrBadConfig))
	fmt.Println(err)
	// Output:
	// <nil> jedis
	// true
	// shardis: bad config: shards 0 (127.0.0.1:6379) and 1 (localhost:6379) are the same server
}

// Stats counts commands, errors and pool use per node; Nodes lists the
// nodes and Router tells ring from cluster mode.
func ExampleClient_Stats() {
	addrs := redisAddrs(3)
	ctx := context.Background()
	cfg, _ := shard.ParseURL("redis-ring://" + strings.Join(addrs, ","))
	client, err := shard.New(ctx, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	for i := range 30 {
		client.Do(ctx, "SET", fmt.Sprintf("stats:%d", i), i)
	}
	var st shard.Stats = client.Stats()
	var total int64
	for _, n := range st.Nodes {
		var ns shard.NodeStats = n
		total += ns.Commands
		if ns.Down || ns.Errors > 0 {
			fmt.Println("trouble on", ns.Node)
		}
	}
	_, ring := client.Router().(*shard.RingRouter)
	fmt.Println(len(client.Nodes()), "nodes,", total, "commands, ring mode:", ring)
	// Output:
	// 3 nodes, 30 commands, ring mode: true
}

// SendKey queues a command routed by a key of your choice, as DoKey does;
// Len and Reset look at and empty the queue.
func ExamplePipeline_SendKey() {
	addrs := redisAddrs(3)
	ctx := context.Background()
	cfg, _ := shard.ParseURL("redis-ring://" + strings.Join(addrs, ","))
	client, err := shard.New(ctx, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()

	p := client.Pipeline()
	p.Send("SET", "greeting", "hi")
	p.Reset() // nothing was sent
	p.Send("SET", "user:7", "Ada")
	// A keyless EVAL, run on the shard that holds user:7's data.
	p.SendKey("user:7", "EVAL", "return redis.call('GET', ARGV[1])", 0, "user:7")
	fmt.Println(p.Len())
	res, err := p.Exec(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(res), res[1].Reply == nil, string(res[1].Reply.([]byte)))
	fmt.Println(client.Do(ctx, "EXISTS", "greeting"))
	// Output:
	// 2
	// 2 false Ada
	// 0 <nil>
}

// Cluster mode's own tools: Refresh reloads the slot map now (after a
// resharding by hand), ForEachNode runs on replicas too, and the
// ClusterRouter shows the table.
func ExampleClusterRouter() {
	ctx := context.Background()
	client, err := shard.New(ctx, shard.Config{Mode: shard.ModeCluster, Seeds: clusterSeeds()})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	fmt.Println(client.Refresh(ctx))

	cr := client.Router().(*shard.ClusterRouter)
	node, _ := cr.Route("user:1000")
	fmt.Println(node.Addr == cr.Table().Master(1649).Addr, len(cr.Nodes()), len(cr.AllNodes()))

	roles := make(chan string, 6)
	err = client.ForEachNode(ctx, func(ctx context.Context, n shard.Node, conn redis.Conn) error {
		role, err := redis.Values(redis.DoContext(conn, ctx, "ROLE"))
		if err == nil {
			r, _ := redis.String(role[0], nil)
			roles <- r
		}
		return err
	})
	close(roles)
	count := map[string]int{}
	for r := range roles {
		count[r]++
	}
	fmt.Println(count, err)
	// Output:
	// <nil>
	// true 3 6
	// map[master:3 slave:3] <nil>
}

// Every error of the client matches one of the package's sentinels or
// typed errors; a switch like this one tells the causes apart.
func Example_errorKinds() {
	describe := func(err error) string {
		var nodeErr *shard.NodeError
		var crossErr *shard.CrossShardError
		var unknownErr *shard.UnknownOutcomeError
		var retryErr *shard.RetryError
		var serverErr redis.Error
		switch {
		case err == nil:
			return "ok"
		case errors.Is(err, shard.ErrBadConfig):
			return "fix the configuration"
		case errors.Is(err, shard.ErrClosed):
			return "the client was closed"
		case errors.Is(err, shard.ErrBadCommand):
			return "malformed arguments, nothing sent"
		case errors.Is(err, shard.ErrUnknownCommand), errors.Is(err, shard.ErrNoKey):
			return "cannot tell where it goes: use DoKey or ForEachShard"
		case errors.As(err, &crossErr): // errors.Is(err, shard.ErrCrossShard)
			return "keys on several shards"
		case errors.Is(err, shard.ErrTxNotRetried): // wraps the redirect or refusal
			return "the transaction's function wrote through tx.Do: not run again"
		case errors.As(err, &unknownErr):
			return "a write that may or may not have run"
		case errors.Is(err, shard.ErrRetryBudget) && errors.As(err, &retryErr):
			return "the cluster did not serve it in time: " + retryErr.Last
		case errors.Is(err, shard.ErrNodeDown), errors.Is(err, shard.ErrNoNodes), errors.As(err, &nodeErr):
			return "a node is down or unreachable"
		case errors.Is(err, shard.ErrTxAborted):
			return "a watched key changed: run the transaction again"
		case errors.As(err, &serverErr):
			return "the server said: " + serverErr.Error()
		}
		return err.Error()
	}

	fmt.Println(describe(shard.Config{}.Validate()))
	addrs := redisAddrs(2)
	ctx := context.Background()
	cfg, _ := shard.ParseURL("redis-ring://" + strings.Join(addrs, ",") + "?names=s0,s1")
	client, err := shard.New(ctx, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	// a and b live on different shards: an odd MSET cannot be split.
	_, err = client.Do(ctx, "MSET", "a", 1, "b")
	fmt.Println(describe(err))
	_, err = client.Do(ctx, "NOSUCHCOMMAND", "x")
	fmt.Println(describe(err))
	_, err = client.Do(ctx, "DBSIZE")
	fmt.Println(describe(err))
	client.Do(ctx, "SET", "s", "text")
	_, err = client.Do(ctx, "INCR", "s")
	fmt.Println(describe(err))
	client.Close()
	_, err = client.Do(ctx, "GET", "a")
	fmt.Println(describe(err))
	// Output:
	// fix the configuration
	// malformed arguments, nothing sent
	// cannot tell where it goes: use DoKey or ForEachShard
	// cannot tell where it goes: use DoKey or ForEachShard
	// the server said: ERR value is not an integer or out of range
	// the client was closed
}
