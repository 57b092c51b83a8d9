package shard_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// A server that refuses a name (here an ACL that lets the dashboard user
// read the news:* channels only) fails the Subscribe call with a
// *SubscribeError; the names it carried are dropped and the rest of the
// subscription goes on. Receive reports the refusal too, in line with the
// messages (a refusal of names added by another goroutine is seen there
// only); it can be called again after it.
func ExampleSubscribeError() {
	addrs := redisAddrs(1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	// The operator's part: a user restricted to some channels, on every shard.
	admin, err := shard.New(ctx, shard.Config{Shards: []ring.Shard{{Addr: addrs[0], Weight: 1}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer admin.Close()
	err = admin.ForEachShard(ctx, func(ctx context.Context, n shard.Node, conn redis.Conn) error {
		_, err := redis.DoContext(conn, ctx, "ACL", "SETUSER", "dashboard", "reset", "on", ">dashboard-pw", "&news:*", "+@all")
		return err
	})
	if err != nil {
		fmt.Println(err)
		return
	}

	client, err := shard.New(ctx, shard.Config{
		Shards: []ring.Shard{{Addr: addrs[0], Weight: 1}},
		Pool:   pool.Options{Username: "dashboard", Password: "dashboard-pw"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	sub, err := client.Subscribe(ctx, "news:eu")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sub.Close()

	err = sub.Subscribe(ctx, "audit:logins")
	var se *shard.SubscribeError
	var reply redis.Error
	if errors.As(err, &se) && errors.As(err, &reply) {
		fmt.Println(se.Command, se.Names, strings.HasPrefix(string(reply), "NOPERM"))
	}

	admin.Do(ctx, "PUBLISH", "news:eu", "markets up")
	for {
		v, err := sub.Receive(ctx)
		switch {
		case errors.Is(err, shard.ErrPubSubReply):
			// A connection sent something that is not pub/sub: it is
			// dialled again and its names subscribed again.
			continue
		case errors.As(err, &se):
			fmt.Println("refused:", se.Names) // those names are gone
			continue
		case err != nil:
			fmt.Println(err) // ctx ended, or the subscription was closed
			return
		}
		if m, ok := v.(redis.Message); ok {
			fmt.Printf("%s: %s\n", m.Channel, m.Data)
			return
		}
	}
	// Output:
	// SUBSCRIBE [audit:logins] true
	// refused: [audit:logins]
	// news:eu: markets up
}

// Do, DoKey and pipelines refuse commands that would change the state of
// a pooled connection for good; nothing is sent, and the error names the
// call that does the job. Subscriptions take connections of their own.
func ExampleConnStateError() {
	addrs := redisAddrs(1)
	ctx := context.Background()
	client, err := shard.New(ctx, shard.Config{Shards: []ring.Shard{{Addr: addrs[0], Weight: 1}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()

	_, err = client.Do(ctx, "SUBSCRIBE", "news")
	fmt.Println(errors.Is(err, shard.ErrConnState))
	var cse *shard.ConnStateError
	if errors.As(err, &cse) {
		fmt.Println(cse.Command, "->", cse.Hint)
	}
	// Output:
	// true
	// SUBSCRIBE -> a subscribed connection takes only pub/sub commands and its messages would never reach you: use Client.Subscribe, PSubscribe or SSubscribe
}

// A nil context is a programming error that the client reports as
// ErrNilContext on every call, instead of panicking deep inside: here a
// request struct whose context was never set.
func Example_nilContext() {
	addrs := redisAddrs(1)
	client, err := shard.New(context.Background(), shard.Config{Shards: []ring.Shard{{Addr: addrs[0], Weight: 1}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()

	type request struct {
		ctx  context.Context
		user string
	}
	req := request{user: "user:1"} // ctx forgotten
	_, err = client.Do(req.ctx, "GET", req.user)
	fmt.Println(errors.Is(err, shard.ErrNilContext), err)
	_, err = client.Subscribe(req.ctx, "news")
	fmt.Println(errors.Is(err, shard.ErrNilContext))
	// Output:
	// true shardis: nil Context
	// true
}

// A Tx lives only while its function runs: one kept for later (here in a
// variable outside the function) refuses every call with ErrTxDone, and
// nothing is sent.
func Example_txDone() {
	addrs := redisAddrs(1)
	ctx := context.Background()
	client, err := shard.New(ctx, shard.Config{Shards: []ring.Shard{{Addr: addrs[0], Weight: 1}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()

	var kept *shard.Tx
	res, err := client.Tx(ctx, []string{"{cart}:items"}, func(tx *shard.Tx) error {
		kept = tx
		return tx.Queue("INCR", "{cart}:items")
	})
	fmt.Println(len(res), err)
	err = kept.Queue("INCR", "{cart}:items")
	fmt.Println(errors.Is(err, shard.ErrTxDone))
	n, _ := redis.Int(client.Do(ctx, "GET", "{cart}:items"))
	fmt.Println(n)
	// Output:
	// 1 <nil>
	// true
	// 1
}

// A Conn, once closed, fails every call with ErrConnClosed; the Client it
// came from stays open.
func Example_connClosed() {
	addrs := redisAddrs(1)
	ctx := context.Background()
	client, err := shard.New(ctx, shard.Config{Shards: []ring.Shard{{Addr: addrs[0], Weight: 1}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()

	conn := client.Conn()
	conn.Close()
	_, err = conn.Do("GET", "greeting")
	fmt.Println(errors.Is(err, shard.ErrConnClosed), errors.Is(err, shard.ErrClosed))
	_, err = client.Do(ctx, "SET", "greeting", "hello")
	fmt.Println(err)
	// Output:
	// true false
	// <nil>
}

// Printing a client shows its configuration, defaults filled in, and
// never a password, whatever the verb.
func ExampleClient_String() {
	addrs := redisAddrs(1)
	ctx := context.Background()
	client, err := shard.New(ctx, shard.Config{
		Shards: []ring.Shard{{Name: "a", Addr: addrs[0], Weight: 1}},
		Pool:   pool.Options{Password: "s3cret"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	for _, verb := range []string{"%v", "%+v", "%#v"} {
		out := fmt.Sprintf(verb, client)
		fmt.Println(strings.HasPrefix(out, "shard.Client{shard.Config{Mode: ring"), strings.Contains(out, "s3cret"))
	}
	// Output:
	// true false
	// true false
	// true false
}

// A cluster Scan by a user whose ACL lets it run neither CLUSTER NODES
// nor CLUSTER COUNTKEYSINSLOT reports every key it meets, then ends with
// a *ScanIncompleteError: no master could tell which slots moved to it
// during the Scan, so nothing proves that none was missed. Allowing the
// user CLUSTER NODES avoids it.
func ExampleScanIncompleteError() {
	ctx := context.Background()
	admin, err := shard.New(ctx, shard.Config{Mode: shard.ModeCluster, Seeds: clusterSeeds()})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer admin.Close()
	acl := func(args ...any) error {
		return admin.ForEachNode(ctx, func(ctx context.Context, n shard.Node, conn redis.Conn) error {
			_, err := redis.DoContext(conn, ctx, "ACL", args...)
			return err
		})
	}
	err = acl("SETUSER", "scan-example", "on", ">scan-example-pw", "~*", "&*", "+@all", "-cluster|nodes", "-cluster|countkeysinslot")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer acl("DELUSER", "scan-example")
	defer admin.Do(ctx, "DEL", "{scan-example}:1", "{scan-example}:2")
	admin.Do(ctx, "MSET", "{scan-example}:1", "a", "{scan-example}:2", "b")

	client, err := shard.New(ctx, shard.Config{Mode: shard.ModeCluster, Seeds: clusterSeeds(),
		Pool: pool.Options{Username: "scan-example", Password: "scan-example-pw"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	s := client.Scan(shard.ScanOptions{Match: "{scan-example}:*"})
	n := 0
	for s.Next(ctx) {
		n++
	}
	err = s.Err()
	var se *shard.ScanIncompleteError
	fmt.Println(n, errors.Is(err, shard.ErrScanIncomplete), errors.As(err, &se) && se.Node.Addr != "")
	fmt.Println(strings.HasPrefix(err.Error(), "shardis: SCAN cannot prove that every key was reported: master "), errors.Unwrap(err) != nil)
	// Output:
	// 2 true true
	// true true
}
