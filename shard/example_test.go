package shard_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// The examples talk to real redis-servers: redisAddrs(n) and clusterSeeds()
// (example_servers_test.go) return their "host:port" addresses. In your own
// code these are your servers' addresses.

func ExampleNew() {
	addrs := redisAddrs(3)
	ctx := context.Background()
	cfg := shard.Config{Hash: ring.Murmur3}
	for i, addr := range addrs {
		cfg.Shards = append(cfg.Shards, ring.Shard{Name: fmt.Sprintf("shard-%d", i), Addr: addr, Weight: 1})
	}
	client, err := shard.New(ctx, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()

	if _, err := client.Do(ctx, "SET", "user:1000:name", "Ada"); err != nil {
		fmt.Println(err)
		return
	}
	name, err := redis.String(client.Do(ctx, "GET", "user:1000:name"))
	fmt.Println(name, err)

	// Keys with one {tag} live on one shard, so multi-key commands work.
	client.Do(ctx, "SADD", "{user1000}.following", "a", "b")
	client.Do(ctx, "SADD", "{user1000}.followers", "b", "c")
	common, err := redis.Strings(client.Do(ctx, "SINTER", "{user1000}.following", "{user1000}.followers"))
	fmt.Println(common, err)
	// Output:
	// Ada <nil>
	// [b] <nil>
}

// The configuration file format, YAML or JSON, with every field. Only
// shards (ring mode) or seeds (cluster mode) are required; every other
// field has a default.
func ExampleLoadConfig() {
	addrs := redisAddrs(3)
	file := fmt.Sprintf(`# Either shards (ring mode) or mode: cluster with seeds.
mode: ring
# url: redis-ring://10.0.0.1:6379,10.0.0.2:6379   # a URL as ParseURL takes; the fields below refine it
hash: jedis          # murmur3 (default), jedis, jedis-legacy, ketama, modula
key_hash: murmur     # the algorithm's key hash; jedis: murmur or md5
tag: "{}"            # hash tag rule: none, cluster, jedis or a pair such as "{}"
shards:
  - {addr: %q, name: shard-a, weight: 2}
  - {addr: %q, name: shard-b}          # weight left out: 1
  - {addr: %q, name: shard-c, weight: 1}
# seeds: [10.0.1.1:7000, 10.0.1.2:7000]   # cluster mode
auto_pipeline: true
cluster:
  refresh_interval: 60s
  min_refresh_interval: 100ms
  max_redirects: 5
  max_retry_wait: 5s
  read_from: master  # master, replica-random, replica-latency
pool:
  max_idle: 16
  max_active: 64
  wait: true
  idle_timeout: 5m
  max_conn_lifetime: 1h
  test_on_borrow: 1m
  dial_timeout: 2s
  read_timeout: 1s
  write_timeout: 1s
  # username: app
  # password_env: REDIS_PASSWORD   # the password is read from this variable
  db: 0
  client_name: billing
  # tls: {ca_file: ca.pem, cert_file: client.pem, key_file: client.key, server_name: redis.internal}
health:
  interval: 1s
  failure_limit: 3
  timeout: 500ms
  auto_eject: false
`, addrs[0], addrs[1], addrs[2])
	path := filepath.Join(os.TempDir(), "shardis-example.yaml")
	if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
		fmt.Println(err)
		return
	}
	defer os.Remove(path)

	cfg, err := shard.LoadConfig(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cfg.Hash, cfg.Tag, len(cfg.Shards), cfg.Shards[0].Weight, cfg.Shards[1].Weight, cfg.Pool.ReadTimeout, cfg.Health.FailureLimit)

	ctx := context.Background()
	client, err := shard.New(ctx, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	fmt.Println(client.Do(ctx, "SET", "greeting", "hello"))

	// A mistake in the file is named by its path.
	_, err = shard.ParseConfig([]byte("shards: [{addr: '127.0.0.1:6379'}]\nhealth: {failurelimit: 3}\n"))
	fmt.Println(err)
	// Output:
	// jedis {} 3 2 1 1s 3
	// OK <nil>
	// shardis: bad config: line 2: unknown field health.failurelimit (known: interval, failure_limit, timeout, auto_eject)
}

// Cluster mode: the same calls, routed by hash slot.
func Example_cluster() {
	ctx := context.Background()
	client, err := shard.New(ctx, shard.Config{
		Mode:  shard.ModeCluster,
		Seeds: clusterSeeds(), // any few nodes of the cluster
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()

	client.Do(ctx, "DEL", "cl:a", "cl:b", "cl:c")
	// MSET and MGET over keys in different slots are split per node and
	// merged back in key order.
	fmt.Println(client.Do(ctx, "MSET", "cl:a", 1, "cl:b", 2, "cl:c", 3))
	vals, err := redis.Ints(client.Do(ctx, "MGET", "cl:a", "cl:b", "cl:c"))
	fmt.Println(vals, err)
	// fn runs on every master at once.
	var masters atomic.Int32
	client.ForEachMaster(ctx, func(ctx context.Context, n shard.Node, conn redis.Conn) error {
		masters.Add(1)
		return nil
	})
	fmt.Println("masters:", masters.Load())
	// Output:
	// OK <nil>
	// [1 2 3] <nil>
	// masters: 3
}

func ExampleClient_Pipeline() {
	addrs := redisAddrs(3)
	ctx := context.Background()
	cfg, err := shard.ParseURL("redis-ring://" + strings.Join(addrs, ","))
	if err != nil {
		fmt.Println(err)
		return
	}
	client, err := shard.New(ctx, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()

	p := client.Pipeline()
	p.Send("SET", "a", "1")
	p.Send("INCR", "a")
	p.Send("MSET", "b", "x", "c", "y") // split over the shards that own b and c
	p.Send("MGET", "a", "b", "c")      // merged back in key order
	results, err := p.Exec(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range results {
		if vals, ok := r.Reply.([]any); ok {
			s, _ := redis.Strings(vals, nil)
			fmt.Println(s)
			continue
		}
		fmt.Println(r.Reply, r.Err)
	}
	// Output:
	// OK <nil>
	// 2 <nil>
	// OK <nil>
	// [2 x y]
}

func ExampleClient_Tx() {
	addrs := redisAddrs(2)
	ctx := context.Background()
	cfg, _ := shard.ParseURL("redis-ring://" + strings.Join(addrs, ","))
	client, err := shard.New(ctx, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	client.Do(ctx, "MSET", "{acct}alice", 100, "{acct}bob", 0)

	replies, err := client.Tx(ctx, []string{"{acct}alice", "{acct}bob"}, func(tx *shard.Tx) error {
		tx.Queue("DECRBY", "{acct}alice", 30)
		return tx.Queue("INCRBY", "{acct}bob", 30)
	})
	fmt.Println(replies, err)
	// Output:
	// [70 30] <nil>
}

// Conn gives redigo code a connection that routes every command by its
// key, so redigo's helpers work as they are.
func ExampleClient_Conn() {
	addrs := redisAddrs(3)
	ctx := context.Background()
	cfg, _ := shard.ParseURL("redis-ring://" + strings.Join(addrs, ","))
	client, err := shard.New(ctx, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()

	conn := client.Conn()
	defer conn.Close()

	// redis.ScanStruct fills a struct from HGETALL.
	type user struct {
		Name  string `redis:"name"`
		Email string `redis:"email"`
		Age   int    `redis:"age"`
	}
	conn.Do("HSET", "user:42", "name", "Ada", "email", "ada@example.com", "age", 36)
	values, err := redis.Values(conn.Do("HGETALL", "user:42"))
	var u user
	if err == nil {
		err = redis.ScanStruct(values, &u)
	}
	fmt.Printf("%+v %v\n", u, err)

	// redis.Script sends EVALSHA, and EVAL when the shard lacks the script;
	// its keys route it.
	incrBy := redis.NewScript(1, `return redis.call("INCRBY", KEYS[1], ARGV[1])`)
	fmt.Println(redis.Int(incrBy.Do(conn, "counter:7", 5)))
	fmt.Println(redis.Int(incrBy.Do(conn, "counter:7", 5)))

	// Send, Flush and Receive pipeline as with a redigo connection.
	conn.Send("SET", "x", 1)
	conn.Send("GET", "x")
	conn.Flush()
	conn.Receive()
	fmt.Println(redis.Int(conn.Receive()))
	// Output:
	// {Name:Ada Email:ada@example.com Age:36} <nil>
	// 5 <nil>
	// 10 <nil>
	// 1 <nil>
}

func ExampleClient_Scan() {
	addrs := redisAddrs(3)
	ctx := context.Background()
	cfg, _ := shard.ParseURL("redis-ring://" + strings.Join(addrs, ","))
	client, err := shard.New(ctx, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	client.Do(ctx, "MSET", "session:1", "a", "session:2", "b", "session:3", "c", "other", "d")

	var keys []string
	s := client.Scan(shard.ScanOptions{Match: "session:*"})
	for s.Next(ctx) {
		keys = append(keys, s.Key())
	}
	if err := s.Err(); err != nil {
		fmt.Println(err)
		return
	}
	slices.Sort(keys) // keys come shard by shard, in no set order
	fmt.Println(keys)
	// Output:
	// [session:1 session:2 session:3]
}

func ExampleClient_ForEachShard() {
	addrs := redisAddrs(3)
	ctx := context.Background()
	cfg, _ := shard.ParseURL("redis-ring://" + strings.Join(addrs, ","))
	client, err := shard.New(ctx, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	for i := range 100 {
		client.Do(ctx, "SET", fmt.Sprintf("k%d", i), i)
	}

	// Count the keys of every shard; fn runs on each shard concurrently.
	sizes := make(chan int, len(addrs))
	err = client.ForEachShard(ctx, func(ctx context.Context, n shard.Node, conn redis.Conn) error {
		size, err := redis.Int(redis.DoContext(conn, ctx, "DBSIZE"))
		sizes <- size
		return err
	})
	close(sizes)
	total, shards := 0, 0
	for size := range sizes {
		total += size
		shards++
	}
	fmt.Println(shards, "shards,", total, "keys", err)
	// Output:
	// 3 shards, 100 keys <nil>
}

// DoKey runs a command on the shard that owns a key when the command
// itself names no key: here a script called by its SHA1 with no keys.
func ExampleClient_DoKey() {
	addrs := redisAddrs(3)
	ctx := context.Background()
	cfg, _ := shard.ParseURL("redis-ring://" + strings.Join(addrs, ","))
	client, err := shard.New(ctx, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()

	// Load the script on every shard (fn runs on all of them at once),
	// then call it next to user:1000's data.
	const src = "return string.upper(ARGV[1])"
	sha := redis.NewScript(0, src).Hash()
	err = client.ForEachShard(ctx, func(ctx context.Context, n shard.Node, conn redis.Conn) error {
		_, err := redis.DoContext(conn, ctx, "SCRIPT", "LOAD", src)
		return err
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(redis.String(client.DoKey(ctx, "user:1000", "EVALSHA", sha, 0, "hello")))
	// Output:
	// HELLO <nil>
}

// Errors say which node failed, which keys are where, and whether a write
// may have run.
func Example_errors() {
	addrs := redisAddrs(2)
	ctx := context.Background()
	client, err := shard.New(ctx, shard.Config{
		Shards: []ring.Shard{
			{Name: "a", Addr: addrs[0], Weight: 1},
			{Name: "b", Addr: addrs[1], Weight: 1},
			{Name: "gone", Addr: "127.0.0.1:1", Weight: 1}, // nothing listens here
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()

	report := func(err error) {
		var nodeErr *shard.NodeError
		var crossErr *shard.CrossShardError
		var unknownErr *shard.UnknownOutcomeError
		switch {
		case err == nil:
			fmt.Println("ok")
		case errors.As(err, &unknownErr):
			// Cluster mode: the write was sent, then the connection failed.
			fmt.Println("may or may not have run:", unknownErr.Command, "on", unknownErr.Node.Name)
		case errors.As(err, &nodeErr):
			fmt.Println("node down:", nodeErr.Node.Name)
		case errors.As(err, &crossErr):
			var where []string
			for _, k := range crossErr.Keys {
				where = append(where, k.Key+" on "+k.Owner)
			}
			fmt.Println(strings.Join(where, ", "))
		default:
			fmt.Println(err)
		}
	}
	// Keys on the live shards work; only keys on "gone" fail.
	for _, key := range []string{"k1", "k2", "k3", "k4", "k5", "k6"} {
		_, err := client.Do(ctx, "SET", key, 1)
		fmt.Print(key, ": ")
		report(err)
	}
	// SINTER cannot be split over shards: nothing is sent.
	_, err = client.Do(ctx, "SINTER", "k1", "k2", "k4")
	report(err)
	fmt.Println(errors.Is(err, shard.ErrCrossShard))
	// Output:
	// k1: ok
	// k2: ok
	// k3: ok
	// k4: node down: gone
	// k5: ok
	// k6: ok
	// k1 on a, k2 on b, k4 on gone
	// true
}

// A write whose connection fails after it was sent may or may not have
// run, so the client does not send it again by itself: it returns an
// *UnknownOutcomeError. Here the cluster's masters hold writes back (CLIENT
// PAUSE) for longer than the client's read timeout.
func ExampleUnknownOutcomeError() {
	ctx := context.Background()
	cfg := shard.Config{Mode: shard.ModeCluster, Seeds: clusterSeeds()}
	cfg.Pool.ReadTimeout = 200 * time.Millisecond
	client, err := shard.New(ctx, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	client.Do(ctx, "DEL", "uo:balance")

	client.ForEachMaster(ctx, func(ctx context.Context, n shard.Node, conn redis.Conn) error {
		_, err := redis.DoContext(conn, ctx, "CLIENT", "PAUSE", 1000, "WRITE")
		return err
	})
	_, err = client.Do(ctx, "INCRBY", "uo:balance", 10)
	var uo *shard.UnknownOutcomeError
	if errors.As(err, &uo) {
		fmt.Println(uo.Command, "may or may not have run")
	}
	client.ForEachMaster(ctx, func(ctx context.Context, n shard.Node, conn redis.Conn) error {
		_, err := redis.DoContext(conn, ctx, "CLIENT", "UNPAUSE")
		return err
	})
	// Look before trying again. Here it did not run: the server drops a
	// paused command when its client hangs up.
	_, err = redis.Int(client.Do(ctx, "GET", "uo:balance"))
	if errors.Is(err, redis.ErrNil) {
		fmt.Println(redis.Int(client.Do(ctx, "INCRBY", "uo:balance", 10)))
	}
	// Output:
	// INCRBY may or may not have run
	// 10 <nil>
}
