package cluster_test

import (
	"errors"
	"fmt"

	"github.com/shardis/shardis/cluster"
)

// A topology that leaves a slot without owner (a cluster that serves with
// cluster-require-full-coverage no after CLUSTER DELSLOTS 100) is an
// *IncompleteError. Fill builds a table from what it did say, giving the
// slot without owner to its master in the table in use, which answers
// commands on it with CLUSTERDOWN.
func ExampleIncompleteError_Fill() {
	inUse, _ := cluster.NewTable([]cluster.Shard{
		{Master: cluster.NodeInfo{Addr: "10.0.0.1:7000"}, Ranges: []cluster.SlotRange{{Start: 0, End: 8191}}},
		{Master: cluster.NodeInfo{Addr: "10.0.0.2:7000"}, Ranges: []cluster.SlotRange{{Start: 8192, End: 16383}}},
	})
	// Now: slot 100 has no owner, and 10.0.0.3 took over from 10.0.0.2.
	_, err := cluster.NewTable([]cluster.Shard{
		{Master: cluster.NodeInfo{Addr: "10.0.0.1:7000"}, Ranges: []cluster.SlotRange{{Start: 0, End: 99}, {Start: 101, End: 8191}}},
		{Master: cluster.NodeInfo{Addr: "10.0.0.3:7000"}, Ranges: []cluster.SlotRange{{Start: 8192, End: 16383}}},
	})
	fmt.Println(err)
	var ie *cluster.IncompleteError
	if !errors.As(err, &ie) {
		return
	}
	fmt.Println(errors.Is(err, cluster.ErrIncomplete), ie.Uncovered)
	table, err := ie.Fill(inUse)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(table.Master(100).Addr, table.Master(9000).Addr)
	// Output:
	// shardis: incomplete slot table: slot 100 not covered
	// true [{100 100}]
	// 10.0.0.1:7000 10.0.0.3:7000
}
