package cluster_test

import (
	"fmt"

	"github.com/shardis/shardis/cluster"
)

func ExampleTable() {
	table, err := cluster.NewTable([]cluster.Shard{
		{
			Master:   cluster.NodeInfo{Addr: "127.0.0.1:7001"},
			Replicas: []cluster.NodeInfo{{Addr: "127.0.0.1:7004"}},
			Ranges:   []cluster.SlotRange{{Start: 5461, End: 10922}},
		},
		{
			Master:   cluster.NodeInfo{Addr: "127.0.0.1:7000"},
			Replicas: []cluster.NodeInfo{{Addr: "127.0.0.1:7003", Health: cluster.HealthLoading}},
			Ranges:   []cluster.SlotRange{{Start: 0, End: 5460}},
		},
		{
			Master: cluster.NodeInfo{Addr: "127.0.0.1:7002"},
			Ranges: []cluster.SlotRange{{Start: 10923, End: 16383}},
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(table)

	slot := cluster.Slot("user:1000")
	fmt.Println("user:1000 is in slot", slot, "served by", table.Master(slot).Addr)
	fmt.Println("replicas for reads:", table.Replicas(slot))

	// After "MOVED 15495 127.0.0.1:7001":
	moved := table.WithSlotOwner(15495, "127.0.0.1:7001")
	fmt.Println(moved.Master(15495).Addr, moved.Equal(table))

	_, err = cluster.NewTable(table.Shards()[:2])
	fmt.Println(err)
	// Output:
	// 0-5460 127.0.0.1:7000 (127.0.0.1:7003 loading)
	// 5461-10922 127.0.0.1:7001 (127.0.0.1:7004)
	// 10923-16383 127.0.0.1:7002 ()
	// user:1000 is in slot 1649 served by 127.0.0.1:7000
	// replicas for reads: []
	// 127.0.0.1:7001 false
	// shardis: incomplete slot table: slots 10923-16383 not covered
}

func ExampleParseSlots() {
	// CLUSTER SLOTS of a one-node cluster whose node does not know its own
	// IP, as redigo returns it: the empty endpoint means "the host the
	// command was sent to".
	reply := []any{
		[]any{int64(0), int64(16383),
			[]any{[]byte(""), int64(7100), []byte("45c8f1b2a9e0d3c4b5a6978877665544332211ff"), []any{}}},
	}
	table, err := cluster.ParseSlots(reply, "10.0.0.5:7100")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(table.Master(0).Addr)
	// Output:
	// 10.0.0.5:7100
}
