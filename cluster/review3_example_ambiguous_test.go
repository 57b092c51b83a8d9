package cluster_test

import (
	"errors"
	"fmt"
	"strings"

	"github.com/shardis/shardis/cluster"
)

// A CLUSTER SHARDS reply of Redis 7.2 or later during a failover, before
// the old master is demoted: one shard lists two masters, both online,
// and does not say which one owns its slots. ParseShards reports
// ErrAmbiguous; Discover then reads CLUSTER SLOTS instead.
func ExampleParseShards_failover() {
	node := func(id string, port int64) []any {
		return []any{[]byte("id"), []byte(id), []byte("port"), port, []byte("ip"), []byte("10.0.0.1"),
			[]byte("endpoint"), []byte("10.0.0.1"), []byte("role"), []byte("master"), []byte("health"), []byte("online")}
	}
	reply := []any{[]any{
		[]byte("slots"), []any{int64(0), int64(16383)},
		[]byte("nodes"), []any{node(strings.Repeat("a", 40), 7000), node(strings.Repeat("b", 40), 7001)},
	}}
	_, err := cluster.ParseShards(reply, "10.0.0.1:7000")
	fmt.Println(errors.Is(err, cluster.ErrAmbiguous))
	fmt.Println(err)
	// Output:
	// true
	// shardis: ambiguous cluster topology: CLUSTER SHARDS shard 0: nodes 0 and 1 are both masters
}
