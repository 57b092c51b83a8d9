package cluster_test

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/shardis/shardis/cluster"
)

// A cluster set to cluster-preferred-endpoint-type hostname whose nodes
// announce no hostname lists them with the endpoint "?". A node that
// gives its IP is dialed there; the node that answered, when it does not
// know its own IP (an empty ip, as in a cluster of one node), is dialed
// at the address asked; a master that gives no IP at all cannot be
// reached, and the error names the misconfiguration.
func ExampleParseSlots_noHostname() {
	node := func(port int64, id byte, meta ...any) []any {
		return []any{[]byte("?"), port, bytes.Repeat([]byte{id}, 40), meta}
	}
	ip := func(v string) []any { return []any{[]byte("ip"), []byte(v)} }

	// The node that answered (port 7000, asked as localhost:7000) and a
	// node at 10.0.0.2.
	reply := []any{
		[]any{int64(0), int64(8191), node(7000, 'a', ip("")...)},
		[]any{int64(8192), int64(16383), node(7001, 'b', ip("10.0.0.2")...)},
	}
	table, err := cluster.ParseSlots(reply, "localhost:7000")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range table.Masters() {
		fmt.Println("master", m.Addr)
	}

	// The second master gives no IP.
	reply[1] = []any{int64(8192), int64(16383), node(7001, 'b')}
	_, err = cluster.ParseSlots(reply, "localhost:7000")
	fmt.Println(errors.Is(err, cluster.ErrNoHostname), errors.Is(err, cluster.ErrMalformed))
	// Output:
	// master localhost:7000
	// master 10.0.0.2:7001
	// true true
}
