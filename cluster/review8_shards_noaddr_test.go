package cluster

import (
	"errors"
	"strings"
	"testing"
)

// A node whose address answered with another node ID (the address was
// taken by a node of another cluster) is flagged noaddr, and Redis 7
// lists it in CLUSTER SHARDS with an empty ip and endpoint and no port.
// ParseShards took that for a malformed reply, so that every node of a
// cluster that lost a replica so gave an unusable topology: the node is
// unreachable, as CLUSTER NODES' noaddr flag already made it.
func TestReview8ParseShardsNoAddrNode(t *testing.T) {
	noAddr := func(id, role string) A {
		return A{"id", id, "ip", "", "endpoint", "", "role", role, "replication-offset", 0, "health", "online"}
	}
	tests := []struct {
		name      string
		reply     any
		wantAddrs []string // the table's nodes, in Nodes order
		wantErr   error
		wantMsg   string
	}{
		{name: "noaddr replica is left out",
			reply:     oneShard(shardNode(idA, 7000, "master", "online"), noAddr(idB, "replica")),
			wantAddrs: []string{"127.0.0.1:7000"}},
		{name: "noaddr master of a shard without slots is left out",
			reply: resp(A{
				A{"slots", A{0, 16383}, "nodes", A{shardNode(idA, 7000, "master", "online")}},
				A{"slots", A{}, "nodes", A{noAddr(idB, "master")}},
			}),
			wantAddrs: []string{"127.0.0.1:7000"}},
		{name: "noaddr master with slots", reply: oneShard(noAddr(idA, "master")),
			wantErr: ErrMalformed, wantMsg: "master has no usable address"},
		{name: "no port but an ip is still malformed",
			reply:   oneShard(A{"id", idA, "ip", "10.0.0.1", "endpoint", "", "role", "master"}),
			wantErr: ErrMalformed, wantMsg: "neither port nor tls-port"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, parse := range []func(any, string) (*Table, error){ParseShards, ParseShardsTLS} {
				tab, err := parse(tt.reply, "127.0.0.1:7000")
				if tt.wantErr != nil {
					if !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), tt.wantMsg) {
						t.Fatalf("err = %v, want %v with %q", err, tt.wantErr, tt.wantMsg)
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				requireNodeAddrs(t, tab, tt.wantAddrs)
			}
		})
	}
}

// CLUSTER SLOTS lists the same noaddr node as ["", 0, id, []]
// (Redis 7.0, seen from a real cluster), which ParseSlots took for a
// malformed reply ("port 0 is not within 1-65535").
func TestReview8ParseSlotsNoAddrNode(t *testing.T) {
	master := func(start, end, port int) A {
		return A{start, end, A{"127.0.0.1", port, idA, A{}}}
	}
	tests := []struct {
		name      string
		reply     any
		wantAddrs []string
		wantMsg   string
	}{
		{name: "noaddr replica is left out",
			reply:     resp(A{append(master(0, 16383, 7000), A{"", 0, idB, A{}})}),
			wantAddrs: []string{"127.0.0.1:7000"}},
		{name: "noaddr replica with endpoint ?",
			reply:     resp(A{append(master(0, 16383, 7000), A{"?", 0, idB, A{}})}),
			wantAddrs: []string{"127.0.0.1:7000"}},
		{name: "noaddr master", reply: resp(A{A{0, 16383, A{"", 0, idA, A{}}}}),
			wantMsg: "master has no usable address"},
		{name: "port zero with a host is still malformed",
			reply:   resp(A{append(master(0, 16383, 7000), A{"127.0.0.1", 0, idB, A{}})}),
			wantMsg: "port 0 is not within 1-65535"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tab, err := ParseSlots(tt.reply, "127.0.0.1:7000")
			if tt.wantMsg != "" {
				if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), tt.wantMsg) {
					t.Fatalf("err = %v, want ErrMalformed with %q", err, tt.wantMsg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			requireNodeAddrs(t, tab, tt.wantAddrs)
		})
	}
}

// requireNodeAddrs checks that tab lists the nodes at want, in order.
func requireNodeAddrs(t *testing.T, tab *Table, want []string) {
	t.Helper()
	var got []string
	for _, n := range tab.Nodes() {
		got = append(got, n.Addr)
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("nodes %v, want %v", got, want)
	}
}
