package cluster_test

import (
	"fmt"

	"github.com/shardis/shardis/cluster"
)

// A client that follows a MOVED by patching its table (WithSlotOwner) can
// keep its per-node state when the new table has the same nodes, as
// after a slot moved between two known masters; a failover, which swaps
// a master and its replica, needs that state rebuilt.
func ExampleTable_SameNodes() {
	shards := func(masterB, replicaB string) []cluster.Shard {
		return []cluster.Shard{
			{Master: cluster.NodeInfo{Addr: "127.0.0.1:7000"}, Ranges: []cluster.SlotRange{{Start: 0, End: 8191}}},
			{
				Master:   cluster.NodeInfo{Addr: masterB},
				Replicas: []cluster.NodeInfo{{Addr: replicaB}},
				Ranges:   []cluster.SlotRange{{Start: 8192, End: 16383}},
			},
		}
	}
	table, err := cluster.NewTable(shards("127.0.0.1:7001", "127.0.0.1:7002"))
	if err != nil {
		fmt.Println(err)
		return
	}

	// "MOVED 9000 127.0.0.1:7000": a slot changed hands, the nodes did not.
	moved := table.WithSlotOwner(9000, "127.0.0.1:7000")
	fmt.Println("after MOVED:", moved.SameNodes(table), moved.Equal(table))

	// The replica of the second shard took over from its master.
	failedOver, err := cluster.NewTable(shards("127.0.0.1:7002", "127.0.0.1:7001"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("after failover:", failedOver.SameNodes(table))
	// Output:
	// after MOVED: true false
	// after failover: false
}
