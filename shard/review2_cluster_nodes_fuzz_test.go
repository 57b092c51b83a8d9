package shard

import (
	"net"
	"strings"
	"testing"
)

// clusterNodesAddrs reads CLUSTER NODES text from a server: whatever the
// text, it returns only dialable host:port addresses (a host, a port that
// is not 0), and it finds a node both by its IP and by the hostname it
// announces.
func FuzzReview2ClusterNodesAddrs(f *testing.F) {
	const id = "07c37dfeb235213a872192d90877d0cd55635b91"
	f.Add(id+" 127.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-5460\n", "127.0.0.1:7000")
	f.Add(id+" 127.0.0.1:7001@17001,node-b slave,fail "+id+" 0 0 1 disconnected\n", "127.0.0.1:7000")
	f.Add(id+" :7002@17002,node-c,shard-id=abc master - 0 0 1 connected\n", "[::1]:7000")
	f.Add(id+" [::1]:7003@17003 master,noaddr - 0 0 1 connected\n", "")
	f.Add(id+" 10.0.0.1:0@0 handshake - 0 0 0 disconnected\r\n", "x")
	f.Add(id+" 10.0.0.1:7004@17004,,shard-id=x master - 0 0 0 connected\n", "")
	f.Add("0 0: 00", "0")     // no port
	f.Add("0 ]0:1 0", "")     // a bracket in the host
	f.Add("0 0:+1,[x] 0", "") // a sign in the port, a bracket in the hostname
	f.Fuzz(func(t *testing.T, text, asked string) {
		for a := range clusterNodesAddrs(text, asked) {
			host, port, err := net.SplitHostPort(a)
			if err != nil {
				t.Fatalf("%q is no host:port: %v", a, err)
			}
			if host == "" || port == "" || port == "0" {
				t.Fatalf("%q has no host or no port", a)
			}
		}
	})
}

func TestReview2ClusterNodesAddrsByIPAndHostname(t *testing.T) {
	const id = "07c37dfeb235213a872192d90877d0cd55635b91"
	text := id + " 127.0.0.1:7001@17001,node-b slave,fail " + id + " 0 0 1 disconnected\n" +
		id + " :7002@17002,node-c,shard-id=abc master - 0 0 1 connected 0-16383\n" +
		id + " 127.0.0.1:7003@17003,,shard-id=abc slave " + id + " 0 0 1 connected\n"
	got := clusterNodesAddrs(text, "10.0.0.9:7000")
	var list []string
	for a := range got {
		list = append(list, a)
	}
	want := []string{"127.0.0.1:7001", "node-b:7001", "10.0.0.9:7002", "node-c:7002", "127.0.0.1:7003"}
	for _, a := range want {
		if got[a] == "" {
			t.Errorf("%s is missing from %s", a, strings.Join(list, " "))
		}
	}
	if len(got) != len(want) {
		t.Errorf("got %d addresses (%s), want %d", len(got), strings.Join(list, " "), len(want))
	}
}
