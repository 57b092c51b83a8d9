package cluster

import (
	"testing"

	"github.com/gomodule/redigo/redis"
)

// allSlots wraps node entries into a one-range reply that serves every
// slot.
func allSlots(nodes ...any) any {
	entry := A{0, 16383}
	entry = append(entry, nodes...)
	return resp(A{entry})
}

func TestParseSlots(t *testing.T) {
	cases := []parseCase{
		{name: "healthy 3+3 cluster", reply: sampleSlots(), asked: "127.0.0.1:7000", text: sampleText},
		{
			name:  "1-node cluster that does not know its IP",
			reply: allSlots(A{"", 7100, idA, A{}}),
			asked: "10.1.2.3:7100",
			text:  "0-16383 10.1.2.3:7100 ()",
		},
		{
			name:  "unknown-endpoint type: null endpoint means the asked host",
			reply: allSlots(A{nil, 7100, idA, A{"ip", "127.0.0.1"}}, A{nil, 7101, idB, A{"ip", "127.0.0.1"}}),
			asked: "proxy.example:7100",
			text:  "0-16383 proxy.example:7100 (proxy.example:7101)",
		},
		{
			name:  "hostname type without hostname: ? falls back to the ip; a replica without ip is skipped",
			reply: allSlots(A{"?", 7100, idA, A{"ip", "127.0.0.1"}}, A{"?", 7101, idB, A{"ip", ""}}, A{"?", 7102, idC, A{}}),
			asked: "127.0.0.9:7100",
			text:  "0-16383 127.0.0.1:7100 ()",
		},
		{
			name:  "hostname type with hostname: the hostname is dialed",
			reply: allSlots(A{"node-a.example", 7100, idA, A{"ip", "127.0.0.1"}}),
			asked: "127.0.0.1:7100",
			text:  "0-16383 node-a.example:7100 ()",
		},
		{
			name:  "2-, 3- and 5-element node entries",
			reply: allSlots(A{"127.0.0.1", 7100}, A{"127.0.0.1", 7101, idB}, A{"127.0.0.1", 7102, idC, A{}, "future", 1}),
			asked: "127.0.0.1:7100",
			text:  "0-16383 127.0.0.1:7100 (127.0.0.1:7101 127.0.0.1:7102)",
		},
		{
			name:  "unknown metadata is ignored whatever its type",
			reply: allSlots(A{"127.0.0.1", 7100, idA, A{"shard-id", "x", "weight", 3, "tags", A{}}}),
			asked: "127.0.0.1:7100",
			text:  "0-16383 127.0.0.1:7100 ()",
		},
		{
			name: "a master with several ranges is one shard; replicas are merged",
			reply: resp(A{
				A{0, 99, slotNode(idA, 7000), slotNode(idD, 7003)},
				A{100, 10922, slotNode(idB, 7001)},
				A{10923, 16383, slotNode(idA, 7000), slotNode(idD, 7003), slotNode(idE, 7004)},
			}),
			asked: "127.0.0.1:7000",
			text:  "0-99,10923-16383 127.0.0.1:7000 (127.0.0.1:7003 127.0.0.1:7004)\n100-10922 127.0.0.1:7001 ()",
		},
		{
			name:  "status strings are accepted like bulk strings",
			reply: A{A{int64(0), int64(16383), A{"127.0.0.1", int64(7100), idA, A{}}}},
			asked: "127.0.0.1:7100",
			text:  "0-16383 127.0.0.1:7100 ()",
		},

		{name: "uncovered slots", reply: resp(A{
			A{0, 5460, slotNode(idA, 7000)},
			A{10923, 16383, slotNode(idC, 7002)},
		}), wantErr: ErrIncomplete, wantMsg: "slots 5461-10922 not covered"},
		{name: "empty reply", reply: A{}, wantErr: ErrIncomplete, wantMsg: "slots 0-16383 not covered"},
		{name: "slot owned twice", reply: resp(A{
			A{0, 5460, slotNode(idA, 7000)},
			A{5460, 16383, slotNode(idC, 7002)},
		}), wantErr: ErrMalformed, wantMsg: "slot 5460 is owned by both 127.0.0.1:7000"},
		{name: "replica of two masters", reply: resp(A{
			A{0, 5460, slotNode(idA, 7000), slotNode(idD, 7003)},
			A{5461, 16383, slotNode(idC, 7002), slotNode(idD, 7003)},
		}), wantErr: ErrMalformed, wantMsg: "address 127.0.0.1:7003 is already used"},
		{name: "master without usable address", reply: allSlots(A{"?", 7100, idA, A{}}),
			wantErr: ErrMalformed, wantMsg: `range 0: node 0: master has no usable address (endpoint "?", ip "")`},

		{name: "reply is a string", reply: []byte("x"), wantErr: ErrMalformed, wantMsg: "CLUSTER SLOTS reply is a string, not an array"},
		{name: "reply is an error", reply: redis.Error("ERR x"), wantErr: ErrMalformed, wantMsg: "reply is an error reply"},
		{name: "entry not an array", reply: resp(A{5}), wantErr: ErrMalformed, wantMsg: "range 0: is an integer, not an array"},
		{name: "entry too short", reply: resp(A{A{0, 16383}}), wantErr: ErrMalformed, wantMsg: "range 0: has 2 elements, want at least 3"},
		{name: "start not an integer", reply: resp(A{A{"0", 16383, slotNode(idA, 7000)}}), wantErr: ErrMalformed, wantMsg: "start is a string"},
		{name: "end not an integer", reply: resp(A{A{0, nil, slotNode(idA, 7000)}}), wantErr: ErrMalformed, wantMsg: "end is null"},
		{name: "end too big", reply: resp(A{A{0, 16384, slotNode(idA, 7000)}}), wantErr: ErrMalformed, wantMsg: "slot range 0-16384 is not within 0-16383"},
		{name: "reversed", reply: resp(A{A{7, 6, slotNode(idA, 7000)}}), wantErr: ErrMalformed, wantMsg: "slot range 7-6"},
		{name: "node not an array", reply: allSlots("127.0.0.1:7000"), wantErr: ErrMalformed, wantMsg: "range 0: node 0: is a string, not an array"},
		{name: "node too short", reply: allSlots(A{"127.0.0.1"}), wantErr: ErrMalformed, wantMsg: "node 0: has 1 elements, want at least 2"},
		{name: "endpoint an integer", reply: allSlots(A{1, 7000}), wantErr: ErrMalformed, wantMsg: "endpoint is an integer, not a string"},
		{name: "port a string", reply: allSlots(slotNode(idA, 7000), A{"127.0.0.1", "7001"}),
			wantErr: ErrMalformed, wantMsg: "range 0: node 1: port is a string, not an integer"},
		{name: "port zero", reply: allSlots(A{"127.0.0.1", 0}), wantErr: ErrMalformed, wantMsg: "port 0 is not within 1-65535"},
		{name: "port negative", reply: allSlots(A{"127.0.0.1", -5}), wantErr: ErrMalformed, wantMsg: "port -5 is not within 1-65535"},
		{name: "id an integer", reply: allSlots(A{"127.0.0.1", 7000, 12}), wantErr: ErrMalformed, wantMsg: "id is an integer, not a string"},
		{name: "metadata a string", reply: allSlots(A{"127.0.0.1", 7000, idA, "ip"}), wantErr: ErrMalformed, wantMsg: "metadata is a string, not a map"},
		{name: "metadata odd", reply: allSlots(A{"127.0.0.1", 7000, idA, A{"ip"}}), wantErr: ErrMalformed, wantMsg: "metadata has an odd number (1)"},
		{name: "metadata key an integer", reply: allSlots(A{"127.0.0.1", 7000, idA, A{1, "x"}}), wantErr: ErrMalformed, wantMsg: "metadata key 0 is an integer"},
		{name: "metadata ip null", reply: allSlots(A{"?", 7000, idA, A{"ip", nil}}), wantErr: ErrMalformed, wantMsg: "metadata ip is null, not a string"},
		{name: "metadata hostname an integer", reply: allSlots(A{"", 7000, idA, A{"hostname", 3}}), wantErr: ErrMalformed, wantMsg: "metadata hostname is an integer"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseSlots(c.reply, c.asked)
			checkParse(t, c, got, err)
			if err == nil {
				checkTable(t, got)
			}
		})
	}
}

func TestParseSlotsFields(t *testing.T) {
	reply := allSlots(
		A{"", 7100, idA, A{"hostname", "node-a.example"}},
		A{"127.0.0.1", 7101, idB, A{}},
	)
	tab, err := ParseSlots(reply, "127.0.0.1:7100")
	if err != nil {
		t.Fatal(err)
	}
	wantMaster := NodeInfo{ID: idA, Addr: "127.0.0.1:7100", Hostname: "node-a.example", Role: RoleMaster}
	if got := tab.Master(0); got != wantMaster {
		t.Errorf("Master = %+v, want %+v", got, wantMaster)
	}
	wantReplica := NodeInfo{ID: idB, Addr: "127.0.0.1:7101", Role: RoleReplica}
	if got := tab.Replicas(16383); len(got) != 1 || got[0] != wantReplica {
		t.Errorf("Replicas = %+v, want [%+v]", got, wantReplica)
	}
}

func TestParseSlotsAgreesWithParseShards(t *testing.T) {
	a, err := ParseShards(sampleShards(), "127.0.0.1:7000")
	if err != nil {
		t.Fatal(err)
	}
	b, err := ParseSlots(sampleSlots(), "127.0.0.1:7000")
	if err != nil {
		t.Fatal(err)
	}
	if !a.Equal(b) || !b.Equal(a) {
		t.Fatalf("tables differ:\n%s\n---\n%s", a, b)
	}
}
