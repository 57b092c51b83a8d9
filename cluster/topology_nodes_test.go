package cluster

import (
	"strings"
	"testing"
)

func TestParseNodes(t *testing.T) {
	cases := []parseCase{
		{name: "healthy 3+3 cluster, myself migrating a slot", text: sampleText, asked: "127.0.0.1:7002",
			reply: sampleNodes()},
		{name: "CRLF line ends and no final newline", text: sampleText, asked: "127.0.0.1:7002",
			reply: strings.TrimSuffix(strings.ReplaceAll(sampleNodes(), "\n", "\r\n"), "\r\n")},
		{name: "1-node cluster that does not know its IP", asked: "10.1.2.3:7100",
			reply: idA + " :7100@17100 myself,master - 0 0 0 connected 0-16383\n",
			text:  "0-16383 10.1.2.3:7100 ()"},
		{name: "importing marker, single slots and hostnames", asked: "127.0.0.1:7000",
			reply: idA + " 127.0.0.1:7000@17000,node-a.example myself,master - 0 0 1 connected 0-5460 5461 [5462-<-" + idB + "]\n" +
				idB + " 127.0.0.1:7001@17001,node-b.example master - 0 0 2 connected 5462-16383\n",
			text: "0-5461 127.0.0.1:7000 ()\n5462-16383 127.0.0.1:7001 ()"},
		{name: "addresses without bus port (before Redis 4)", asked: "127.0.0.1:7000",
			reply: idA + " 127.0.0.1:7000 myself,master - 0 0 1 connected 0-16383\n" +
				idB + " 127.0.0.1:7001 slave " + idA + " 0 0 1 connected\n",
			text: "0-16383 127.0.0.1:7000 (127.0.0.1:7001)"},
		{name: "IPv6", asked: "[::1]:7000",
			reply: idA + " ::1:7000@17000 myself,master - 0 0 1 connected 0-16383\n" +
				idB + " [::1]:7001@17001 slave " + idA + " 0 0 1 connected\n",
			text: "0-16383 [::1]:7000 ([::1]:7001)"},
		{name: "failed replica, handshake and noaddr nodes are skipped", asked: "127.0.0.1:7000",
			reply: idA + " 127.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-16383\n" +
				idB + " 127.0.0.1:7001@17001 slave,fail " + idA + " 0 0 1 disconnected\n" +
				idC + " 127.0.0.1:7002@17002 slave " + idA + " 0 0 1 connected\n" +
				idD + " 127.0.0.1:7003@17003 handshake - 0 0 0 disconnected\n" +
				idE + " :0@0 slave,noaddr " + idA + " 0 0 1 disconnected\n" +
				idF + " 127.0.0.1:7005@17005 noflags - 0 0 0 connected\n",
			text: "0-16383 127.0.0.1:7000 (127.0.0.1:7002)"},
		{name: "a failed master that owns slots is kept (before the failover)", asked: "127.0.0.1:7000",
			reply: idA + " 127.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-5460\n" +
				idB + " 127.0.0.1:7001@17001 master,fail - 0 0 2 disconnected 5461-16383\n" +
				idC + " 127.0.0.1:7002@17002 slave " + idB + " 0 0 2 connected\n",
			text: "0-5460 127.0.0.1:7000 ()\n5461-16383 127.0.0.1:7001 fail (127.0.0.1:7002)"},
		{name: "after the failover the old master without slots is dropped", asked: "127.0.0.1:7000",
			reply: idA + " 127.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-5460\n" +
				idB + " 127.0.0.1:7001@17001 master,fail - 0 0 2 disconnected\n" +
				idC + " 127.0.0.1:7002@17002 master - 0 0 4 connected 5461-16383\n",
			text: "0-5460 127.0.0.1:7000 ()\n5461-16383 127.0.0.1:7002 ()"},
		{name: "suspected (fail?) nodes are kept", asked: "127.0.0.1:7000",
			reply: idA + " 127.0.0.1:7000@17000 master,fail? - 0 0 1 connected 0-16383\n" +
				idB + " 127.0.0.1:7001@17001 slave,fail? " + idA + " 0 0 1 connected\n",
			text: "0-16383 127.0.0.1:7000 (127.0.0.1:7001)"},
		{name: "a replica of an unknown master is dropped; an empty master kept", asked: "127.0.0.1:7000",
			reply: idA + " 127.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-16383\n" +
				idB + " 127.0.0.1:7001@17001 slave " + idF + " 0 0 1 connected\n" +
				idC + " 127.0.0.1:7002@17002 master - 0 0 0 connected\n",
			text: "0-16383 127.0.0.1:7000 ()\nno-slots 127.0.0.1:7002 ()"},
		{name: "blank lines are ignored", asked: "127.0.0.1:7000",
			reply: "\n  \n" + idA + " 127.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-16383\n\n",
			text:  "0-16383 127.0.0.1:7000 ()"},

		{name: "empty text", reply: "", wantErr: ErrIncomplete, wantMsg: "slots 0-16383 not covered"},
		{name: "uncovered slots", wantErr: ErrIncomplete, wantMsg: "slots 5461-10922 not covered",
			reply: idA + " 127.0.0.1:7000@17000 master - 0 0 1 connected 0-5460 10923-16383\n"},
		{name: "slot owned twice", wantErr: ErrMalformed, wantMsg: "slot 100 is owned by both",
			reply: idA + " 127.0.0.1:7000@17000 master - 0 0 1 connected 0-100\n" +
				idB + " 127.0.0.1:7001@17001 master - 0 0 1 connected 100-16383\n"},
		{name: "short line", wantErr: ErrMalformed, wantMsg: "CLUSTER NODES line 2: 3 fields, want at least 8",
			reply: idA + " 127.0.0.1:7000@17000 master - 0 0 1 connected 0-16383\nabc def ghi\n"},
		{name: "address without port", wantErr: ErrMalformed, wantMsg: `line 1: address "127.0.0.1" has no port`,
			reply: idA + " 127.0.0.1 master - 0 0 1 connected 0-16383\n"},
		{name: "port not a number", wantErr: ErrMalformed, wantMsg: "port is not an integer within 0-65535",
			reply: idA + " 127.0.0.1:x@1 master - 0 0 1 connected 0-16383\n"},
		{name: "port too big", wantErr: ErrMalformed, wantMsg: "port is not an integer within 0-65535",
			reply: idA + " 127.0.0.1:65536@1 master - 0 0 1 connected 0-16383\n"},
		{name: "bad slot", wantErr: ErrMalformed, wantMsg: `slot range "0-16384" is not within 0-16383`,
			reply: idA + " 127.0.0.1:7000@17000 master - 0 0 1 connected 0-16384\n"},
		{name: "reversed slots", wantErr: ErrMalformed, wantMsg: `slot range "9-5"`,
			reply: idA + " 127.0.0.1:7000@17000 master - 0 0 1 connected 9-5\n"},
		{name: "slot not a number", wantErr: ErrMalformed, wantMsg: `slot range "x"`,
			reply: idA + " 127.0.0.1:7000@17000 master - 0 0 1 connected x\n"},
		{name: "replica with slots", wantErr: ErrMalformed, wantMsg: "replica " + idB + " lists slots",
			reply: idA + " 127.0.0.1:7000@17000 master - 0 0 1 connected 0-16383\n" +
				idB + " 127.0.0.1:7001@17001 slave " + idA + " 0 0 1 connected 5\n"},
		{name: "duplicate id", wantErr: ErrMalformed, wantMsg: "line 2: node id",
			reply: idA + " 127.0.0.1:7000@17000 master - 0 0 1 connected 0-16383\n" +
				idA + " 127.0.0.1:7001@17001 master - 0 0 1 connected\n"},
		{name: "noaddr master with slots", wantErr: ErrMalformed, wantMsg: "owns slots but has no usable address (flags master,noaddr)",
			reply: idA + " :0@0 master,noaddr - 0 0 1 disconnected 0-16383\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseNodes(c.reply.(string), c.asked)
			checkParse(t, c, got, err)
			if err == nil {
				checkTable(t, got)
			}
		})
	}
}

func TestParseNodesFields(t *testing.T) {
	text := idA + " 127.0.0.1:7000@17000,node-a.example myself,master - 0 0 1 connected 0-16383\n" +
		idB + " 127.0.0.1:7001@17001 slave " + idA + " 0 0 1 connected\n"
	tab, err := ParseNodes(text, "127.0.0.1:7000")
	if err != nil {
		t.Fatal(err)
	}
	wantMaster := NodeInfo{ID: idA, Addr: "127.0.0.1:7000", Hostname: "node-a.example", Role: RoleMaster}
	if got := tab.Master(100); got != wantMaster {
		t.Errorf("Master = %+v, want %+v", got, wantMaster)
	}
	wantReplica := NodeInfo{ID: idB, Addr: "127.0.0.1:7001", Role: RoleReplica}
	if got := tab.Replicas(100); len(got) != 1 || got[0] != wantReplica {
		t.Errorf("Replicas = %+v, want [%+v]", got, wantReplica)
	}
	shards, err := ParseShards(sampleShards(), "127.0.0.1:7000")
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := ParseNodes(sampleNodes(), "127.0.0.1:7002")
	if err != nil {
		t.Fatal(err)
	}
	if !nodes.Equal(shards) {
		t.Fatalf("CLUSTER NODES and CLUSTER SHARDS of one cluster differ:\n%s\n---\n%s", nodes, shards)
	}
}
