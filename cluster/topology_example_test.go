package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/cluster"
)

// CLUSTER NODES text of a two-master cluster where one replica has failed
// (and is left out of the table): Masters, Shards, Nodes and ShardOf read
// the table it gives.
func ExampleParseNodes() {
	a, b, c, d := strings.Repeat("a", 40), strings.Repeat("b", 40), strings.Repeat("c", 40), strings.Repeat("d", 40)
	text := a + " 10.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-8191\n" +
		b + " 10.0.0.2:7000@17000 master - 0 0 2 connected 8192-16383\n" +
		c + " 10.0.0.3:7000@17000 slave " + a + " 0 0 1 connected\n" +
		d + " 10.0.0.4:7000@17000 slave,fail " + b + " 0 0 2 connected\n"
	table, err := cluster.ParseNodes(text, "10.0.0.1:7000")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range table.Masters() {
		fmt.Println("master", m.Addr, m.Role == cluster.RoleMaster)
	}
	for _, s := range table.Shards() {
		for _, r := range s.Replicas {
			fmt.Println("replica of", s.Master.Addr, r.Addr, r.Role == cluster.RoleReplica, r.Health != cluster.HealthFail)
		}
	}
	fmt.Println(len(table.Nodes()), "nodes to send commands to")
	fmt.Println("slot 9000 is served by shard", table.ShardOf(9000))

	_, err = cluster.ParseNodes("not a node line\n", "10.0.0.1:7000")
	fmt.Println(errors.Is(err, cluster.ErrMalformed))
	_, err = cluster.ParseNodes(a+" 10.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-100\n", "10.0.0.1:7000")
	fmt.Println(errors.Is(err, cluster.ErrIncomplete))
	// Output:
	// master 10.0.0.1:7000 true
	// master 10.0.0.2:7000 true
	// replica of 10.0.0.1:7000 10.0.0.3:7000 true true
	// 3 nodes to send commands to
	// slot 9000 is served by shard 1
	// true
	// true
}

// CLUSTER SHARDS (Redis 7) as redigo returns it. ParseShards dials the
// plain port; ParseShardsTLS the tls-port, for clusters that serve TLS.
func ExampleParseShards() {
	node := func(id string, port, tlsPort int64, role string) []any {
		return []any{[]byte("id"), []byte(id), []byte("port"), port, []byte("tls-port"), tlsPort,
			[]byte("ip"), []byte("10.0.0.1"), []byte("endpoint"), []byte("10.0.0.1"),
			[]byte("role"), []byte(role), []byte("replication-offset"), int64(0), []byte("health"), []byte("online")}
	}
	reply := []any{
		[]any{[]byte("slots"), []any{int64(0), int64(16383)},
			[]byte("nodes"), []any{node(strings.Repeat("a", 40), 7000, 8000, "master"), node(strings.Repeat("b", 40), 7001, 8001, "replica")}},
	}
	plain, err := cluster.ParseShards(reply, "10.0.0.1:7000")
	if err != nil {
		fmt.Println(err)
		return
	}
	tls, err := cluster.ParseShardsTLS(reply, "10.0.0.1:8000")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(plain.Master(0).Addr, plain.Replicas(0)[0].Addr, plain.Replicas(0)[0].Health == cluster.HealthOnline)
	fmt.Println(tls.Master(0).Addr, tls.Replicas(0)[0].Addr)
	// Output:
	// 10.0.0.1:7000 10.0.0.1:7001 true
	// 10.0.0.1:8000 10.0.0.1:8001
}

// Discover asks the seeds in turn for the topology, with connections from
// a Dialer (logged in, over TLS if needed; DiscoverTLS takes the nodes'
// TLS ports). Each seed's failure is a *SeedError.
func ExampleDiscover() {
	dial := cluster.Dialer(func(ctx context.Context, addr string) (redis.Conn, error) {
		return redis.DialContext(ctx, "tcp", addr)
	})
	ctx := context.Background()
	_, err := cluster.Discover(ctx, nil, dial)
	fmt.Println(errors.Is(err, cluster.ErrNoSeeds))

	_, err = cluster.DiscoverTLS(ctx, []string{"127.0.0.1:1"}, dial) // nothing listens there
	var seedErr *cluster.SeedError
	fmt.Println(errors.As(err, &seedErr), seedErr.Seed)
	// A plain redis-server as a seed gives cluster.ErrNotCluster.
	fmt.Println(errors.Is(err, cluster.ErrNotCluster))
	// Output:
	// true
	// true 127.0.0.1:1
	// false
}

// SlotBytes is Slot for a key held in bytes.
func ExampleSlotBytes() {
	fmt.Println(cluster.SlotBytes([]byte("{user1000}.following")), cluster.Slot("user1000"))
	// Output:
	// 3443 3443
}
