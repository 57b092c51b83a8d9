package cluster_test

import (
	"fmt"

	"github.com/shardis/shardis/cluster"
)

func ExampleParseRedirect() {
	for _, msg := range []string{
		"MOVED 3999 127.0.0.1:6381",
		"ASK 3999 :6380", // empty host: the host the command was sent to
		"MOVED 3999 ::1:6380",
		"CLUSTERDOWN The cluster is down",
	} {
		r, ok := cluster.ParseRedirect(msg, "10.0.0.5:6379")
		fmt.Println(cluster.ErrorCode(msg), ok, r.Kind, r.Slot, r.Addr)
	}
	// Output:
	// MOVED true MOVED 3999 127.0.0.1:6381
	// ASK true ASK 3999 10.0.0.5:6380
	// MOVED true MOVED 3999 [::1]:6380
	// CLUSTERDOWN false RedirectKind(0) 0
}
