package cluster

import (
	"errors"
	"testing"

	"github.com/gomodule/redigo/redis"
)

// oneShard wraps node maps into a one-shard reply that serves every slot.
func oneShard(nodes ...A) any {
	list := make(A, len(nodes))
	for i, n := range nodes {
		list[i] = n
	}
	return resp(A{A{"slots", A{0, 16383}, "nodes", list}})
}

// withShard is sampleShards with its middle shard (5461-10922) replaced.
func withShard(shard A) any {
	return resp(A{
		A{"slots", A{0, 5460}, "nodes", A{shardNode(idA, 7000, "master", "online")}},
		shard,
		A{"slots", A{10923, 16383}, "nodes", A{shardNode(idC, 7002, "master", "online")}},
	})
}

func TestParseShards(t *testing.T) {
	cases := []parseCase{
		{name: "healthy 3+3 cluster", reply: sampleShards(), asked: "127.0.0.1:7000", text: sampleText},
		{
			name: "1-node cluster that does not know its IP (endpoint and ip empty)",
			reply: oneShard(A{"id", idA, "port", 7100, "ip", "", "endpoint", "",
				"role", "master", "replication-offset", 0, "health", "online"}),
			asked: "10.1.2.3:7100",
			text:  "0-16383 10.1.2.3:7100 ()",
		},
		{
			name: "unknown-endpoint type: empty endpoint means the asked host, not the ip",
			reply: oneShard(
				A{"id", idA, "port", 7100, "ip", "127.0.0.1", "endpoint", "", "role", "master", "health", "online"},
				A{"id", idB, "port", 7101, "ip", "127.0.0.1", "endpoint", "", "role", "replica", "health", "online"}),
			asked: "proxy.example:7100",
			text:  "0-16383 proxy.example:7100 (proxy.example:7101)",
		},
		{
			name: "null endpoint counts as empty",
			reply: oneShard(
				A{"id", idA, "port", 7100, "ip", "127.0.0.1", "endpoint", nil, "role", "master", "health", "online"}),
			asked: "10.1.2.3:7000",
			text:  "0-16383 10.1.2.3:7100 ()",
		},
		{
			name: "missing endpoint counts as empty",
			reply: oneShard(
				A{"id", idA, "port", 7100, "ip", "127.0.0.1", "role", "master", "health", "online"}),
			asked: "[::1]:7000",
			text:  "0-16383 [::1]:7100 ()",
		},
		{
			name: "hostname type without hostnames: endpoint ? falls back to the ip; a replica without ip is skipped",
			reply: oneShard(
				A{"id", idA, "port", 7100, "ip", "127.0.0.1", "endpoint", "?", "role", "master", "health", "online"},
				A{"id", idB, "port", 7101, "ip", "", "endpoint", "?", "role", "replica", "health", "online"},
				A{"id", idC, "port", 7102, "ip", "127.0.0.2", "endpoint", "?", "role", "replica", "health", "online"}),
			asked: "127.0.0.1:7100",
			text:  "0-16383 127.0.0.1:7100 (127.0.0.2:7102)",
		},
		{
			name: "hostname type with hostnames: the hostname is dialed",
			reply: oneShard(
				A{"id", idA, "port", 7100, "ip", "127.0.0.1", "endpoint", "node-a.example", "hostname", "node-a.example",
					"role", "master", "health", "online"}),
			asked: "127.0.0.1:7100",
			text:  "0-16383 node-a.example:7100 ()",
		},
		{
			name: "IPv6 endpoint is bracketed",
			reply: oneShard(
				A{"id", idA, "port", 7100, "ip", "::1", "endpoint", "::1", "role", "master", "health", "online"}),
			asked: "[::1]:7100",
			text:  "0-16383 [::1]:7100 ()",
		},
		{
			name: "unknown keys are ignored, in shards and nodes",
			reply: resp(A{A{"shard-id", "x", "slots", A{0, 16383}, "future", A{1, 2}, "nodes", A{
				A{"id", idA, "port", 7100, "ip", "127.0.0.1", "endpoint", "127.0.0.1", "availability-zone", "az1",
					"role", "master", "replication-offset", 99, "health", "online", "weird", nil},
			}}}),
			asked: "127.0.0.1:7100",
			text:  "0-16383 127.0.0.1:7100 ()",
		},
		{
			name: "failed replicas are skipped, loading ones kept and marked",
			reply: withShard(A{"slots", A{5461, 10922}, "nodes", A{
				shardNode(idB, 7001, "master", "online"),
				shardNode(idD, 7003, "replica", "fail"),
				shardNode(idE, 7004, "replica", "loading"),
				shardNode(idF, 7005, "replica", "online"),
			}}),
			asked: "127.0.0.1:7000",
			text: "0-5460 127.0.0.1:7000 ()\n" +
				"5461-10922 127.0.0.1:7001 (127.0.0.1:7004 loading 127.0.0.1:7005)\n" +
				"10923-16383 127.0.0.1:7002 ()",
		},
		{
			name: "discontiguous ranges of one shard, out of order",
			reply: resp(A{
				A{"slots", A{10923, 16383, 0, 99}, "nodes", A{shardNode(idA, 7000, "master", "online")}},
				A{"slots", A{100, 10922}, "nodes", A{shardNode(idB, 7001, "master", "online")}},
			}),
			asked: "127.0.0.1:7000",
			text:  "0-99,10923-16383 127.0.0.1:7000 ()\n100-10922 127.0.0.1:7001 ()",
		},
		{
			name: "adjacent ranges are merged",
			reply: resp(A{
				A{"slots", A{0, 99, 100, 16383}, "nodes", A{shardNode(idA, 7000, "master", "online")}},
			}),
			asked: "127.0.0.1:7000",
			text:  "0-16383 127.0.0.1:7000 ()",
		},
		{
			name: "a master without slots is kept, a failed one without slots dropped",
			reply: resp(A{
				A{"slots", A{}, "nodes", A{shardNode(idD, 7003, "master", "online")}},
				A{"slots", A{}, "nodes", A{shardNode(idE, 7004, "master", "fail")}},
				A{"slots", A{0, 16383}, "nodes", A{shardNode(idA, 7000, "master", "online")}},
			}),
			asked: "127.0.0.1:7000",
			text:  "0-16383 127.0.0.1:7000 ()\nno-slots 127.0.0.1:7003 ()",
		},
		{
			name: "a shard without slots whose master is unreachable is dropped",
			reply: resp(A{
				A{"slots", A{}, "nodes", A{A{"id", idD, "port", 7003, "ip", "", "endpoint", "?", "role", "master", "health", "online"}}},
				A{"slots", A{0, 16383}, "nodes", A{shardNode(idA, 7000, "master", "online")}},
			}),
			asked: "127.0.0.1:7000",
			text:  "0-16383 127.0.0.1:7000 ()",
		},
		{
			name: "a shard without slots and without master is dropped",
			reply: resp(A{
				A{"slots", A{}, "nodes", A{shardNode(idD, 7003, "replica", "online")}},
				A{"slots", A{0, 16383}, "nodes", A{shardNode(idA, 7000, "master", "online")}},
			}),
			asked: "127.0.0.1:7000",
			text:  "0-16383 127.0.0.1:7000 ()",
		},
		{
			name: "a failed master that still owns slots is kept (before the failover)",
			reply: withShard(A{"slots", A{5461, 10922}, "nodes", A{
				shardNode(idB, 7001, "master", "fail"),
				shardNode(idF, 7005, "replica", "online"),
			}}),
			asked: "127.0.0.1:7000",
			text: "0-5460 127.0.0.1:7000 ()\n" +
				"5461-10922 127.0.0.1:7001 fail (127.0.0.1:7005)\n" +
				"10923-16383 127.0.0.1:7002 ()",
		},
		{
			name: "a failed old master beside the promoted one is ignored",
			reply: withShard(A{"slots", A{5461, 10922}, "nodes", A{
				shardNode(idB, 7001, "master", "fail"),
				shardNode(idF, 7005, "master", "online"),
			}}),
			asked: "127.0.0.1:7000",
			text: "0-5460 127.0.0.1:7000 ()\n" +
				"5461-10922 127.0.0.1:7005 ()\n" +
				"10923-16383 127.0.0.1:7002 ()",
		},
		{
			name: "TLS-only nodes have only tls-port",
			reply: oneShard(
				A{"id", idA, "tls-port", 7100, "ip", "127.0.0.1", "endpoint", "127.0.0.1", "role", "master", "health", "online"}),
			asked: "127.0.0.1:7100",
			text:  "0-16383 127.0.0.1:7100 ()",
		},
		{
			name: "with both ports ParseShards uses the plain one",
			reply: oneShard(
				A{"id", idA, "port", 7100, "tls-port", 8100, "ip", "127.0.0.1", "endpoint", "127.0.0.1", "role", "master", "health", "online"}),
			asked: "127.0.0.1:7100",
			text:  "0-16383 127.0.0.1:7100 ()",
		},
		{
			name: "old role name slave is read as replica",
			reply: oneShard(
				A{"id", idA, "port", 7100, "ip", "127.0.0.1", "endpoint", "127.0.0.1", "role", "master"},
				A{"id", idB, "port", 7101, "ip", "127.0.0.1", "endpoint", "127.0.0.1", "role", "slave"}),
			asked: "127.0.0.1:7100",
			text:  "0-16383 127.0.0.1:7100 (127.0.0.1:7101)",
		},
		{
			name: "status strings are accepted like bulk strings",
			reply: A{A{"slots", A{int64(0), int64(16383)}, "nodes", A{
				A{"id", idA, "port", int64(7100), "ip", "127.0.0.1", "endpoint", "127.0.0.1", "role", "master"}}}},
			asked: "127.0.0.1:7100",
			text:  "0-16383 127.0.0.1:7100 ()",
		},

		// Incomplete and contradictory topologies.
		{name: "uncovered slots", reply: resp(A{
			A{"slots", A{0, 5460}, "nodes", A{shardNode(idA, 7000, "master", "online")}},
			A{"slots", A{10923, 16383}, "nodes", A{shardNode(idC, 7002, "master", "online")}},
		}), wantErr: ErrIncomplete, wantMsg: "slots 5461-10922 not covered"},
		{name: "one uncovered slot", reply: resp(A{
			A{"slots", A{0, 5460, 5462, 16383}, "nodes", A{shardNode(idA, 7000, "master", "online")}},
		}), wantErr: ErrIncomplete, wantMsg: "slot 5461 not covered"},
		{name: "empty reply", reply: A{}, wantErr: ErrIncomplete, wantMsg: "slots 0-16383 not covered"},
		{name: "slot owned twice", reply: resp(A{
			A{"slots", A{0, 5460}, "nodes", A{shardNode(idA, 7000, "master", "online")}},
			A{"slots", A{5000, 16383}, "nodes", A{shardNode(idB, 7001, "master", "online")}},
		}), wantErr: ErrMalformed, wantMsg: "slot 5000 is owned by both 127.0.0.1:7000"},
		{name: "master address used twice", reply: resp(A{
			A{"slots", A{0, 5460}, "nodes", A{shardNode(idA, 7000, "master", "online")}},
			A{"slots", A{5461, 16383}, "nodes", A{shardNode(idB, 7000, "master", "online")}},
		}), wantErr: ErrMalformed, wantMsg: "address 127.0.0.1:7000 is already used"},
		{name: "master without usable address", reply: oneShard(
			A{"id", idA, "port", 7100, "ip", "", "endpoint", "?", "role", "master", "health", "online"}),
			wantErr: ErrMalformed, wantMsg: `shard 0: node 0: master has no usable address (endpoint "?", ip "")`},
		{name: "two live masters", reply: oneShard(
			shardNode(idA, 7000, "master", "online"), shardNode(idB, 7001, "master", "online")),
			wantErr: ErrAmbiguous, wantMsg: "shard 0: nodes 0 and 1 are both masters"},
		{name: "slots without master", reply: oneShard(shardNode(idA, 7000, "replica", "online")),
			wantErr: ErrMalformed, wantMsg: "shard 0: owns slots but lists no master"},

		// Wrong shapes and types.
		{name: "reply is an integer", reply: int64(3), wantErr: ErrMalformed, wantMsg: "CLUSTER SHARDS reply is an integer, not an array"},
		{name: "reply is nil", reply: nil, wantErr: ErrMalformed, wantMsg: "reply is null"},
		{name: "reply is an error", reply: redis.Error("ERR boom"), wantErr: ErrMalformed, wantMsg: "reply is an error reply"},
		{name: "shard is a string", reply: resp(A{"x"}), wantErr: ErrMalformed, wantMsg: "shard 0: is a string, not a map"},
		{name: "shard map odd", reply: resp(A{A{"slots"}}), wantErr: ErrMalformed, wantMsg: "shard 0: map has an odd number (1)"},
		{name: "shard key not a string", reply: resp(A{A{1, A{}}}), wantErr: ErrMalformed, wantMsg: "shard 0: key 0 is an integer"},
		{name: "no slots field", reply: resp(A{A{"nodes", A{}}}), wantErr: ErrMalformed, wantMsg: "shard 0: no slots field"},
		{name: "no nodes field", reply: resp(A{A{"slots", A{}}}), wantErr: ErrMalformed, wantMsg: "shard 0: no nodes field"},
		{name: "slots not an array", reply: resp(A{A{"slots", "0-5", "nodes", A{}}}), wantErr: ErrMalformed, wantMsg: "slots is a string, not an array"},
		{name: "nodes not an array", reply: resp(A{A{"slots", A{}, "nodes", 5}}), wantErr: ErrMalformed, wantMsg: "nodes is an integer, not an array"},
		{name: "slots odd", reply: resp(A{A{"slots", A{0}, "nodes", A{}}}), wantErr: ErrMalformed, wantMsg: "slots has an odd number (1)"},
		{name: "slot not an integer", reply: resp(A{A{"slots", A{0, "5"}, "nodes", A{}}}), wantErr: ErrMalformed, wantMsg: "slot range 0 is not two integers"},
		{name: "slot too big", reply: resp(A{A{"slots", A{0, 16384}, "nodes", A{}}}), wantErr: ErrMalformed, wantMsg: "slot range 0-16384 is not within 0-16383"},
		{name: "slot negative", reply: resp(A{A{"slots", A{-1, 5}, "nodes", A{}}}), wantErr: ErrMalformed, wantMsg: "slot range -1-5"},
		{name: "slot range reversed", reply: resp(A{A{"slots", A{9, 5}, "nodes", A{}}}), wantErr: ErrMalformed, wantMsg: "slot range 9-5"},
		{name: "node not a map", reply: resp(A{A{"slots", A{}, "nodes", A{shardNode(idA, 7000, "master", "online"), nil}}}),
			wantErr: ErrMalformed, wantMsg: "shard 0: node 1: is null, not a map"},
		{name: "node map odd", reply: oneShard(A{"id"}), wantErr: ErrMalformed, wantMsg: "node 0: map has an odd number"},
		{name: "node key not a string", reply: oneShard(A{A{}, 1}), wantErr: ErrMalformed, wantMsg: "node 0: key 0 is an array"},
		{name: "port is a string", reply: resp(A{
			A{"slots", A{0, 100}, "nodes", A{shardNode(idA, 7000, "master", "online")}},
			A{"slots", A{101, 16383}, "nodes", A{shardNode(idB, 7001, "master", "online"),
				A{"id", idC, "port", "7002", "ip", "127.0.0.1", "endpoint", "127.0.0.1", "role", "replica"}}},
		}), wantErr: ErrMalformed, wantMsg: "CLUSTER SHARDS shard 1: node 1: port is a string, not an integer"},
		{name: "tls-port is null", reply: oneShard(A{"tls-port", nil, "role", "master"}),
			wantErr: ErrMalformed, wantMsg: "tls-port is null, not an integer"},
		{name: "port zero", reply: oneShard(A{"port", 0, "role", "master", "endpoint", "h"}),
			wantErr: ErrMalformed, wantMsg: "port 0 is not within 1-65535"},
		{name: "port too big", reply: oneShard(A{"port", 65536, "role", "master", "endpoint", "h"}),
			wantErr: ErrMalformed, wantMsg: "port 65536 is not within 1-65535"},
		{name: "no port", reply: oneShard(A{"role", "master", "endpoint", "h"}),
			wantErr: ErrMalformed, wantMsg: "neither port nor tls-port"},
		{name: "id is an integer", reply: oneShard(A{"id", 5, "port", 1, "role", "master"}),
			wantErr: ErrMalformed, wantMsg: "id is an integer, not a string"},
		{name: "endpoint is an array", reply: oneShard(A{"endpoint", A{}, "port", 1, "role", "master"}),
			wantErr: ErrMalformed, wantMsg: "endpoint is an array, not a string"},
		{name: "ip is an integer", reply: oneShard(A{"ip", 1, "port", 1, "role", "master"}),
			wantErr: ErrMalformed, wantMsg: "ip is an integer, not a string"},
		{name: "health is an integer", reply: oneShard(A{"health", 1, "port", 1, "role", "master"}),
			wantErr: ErrMalformed, wantMsg: "health is an integer, not a string"},
		{name: "hostname is null", reply: oneShard(A{"hostname", nil, "port", 1, "role", "master"}),
			wantErr: ErrMalformed, wantMsg: "hostname is null, not a string"},
		{name: "no role", reply: oneShard(A{"port", 1}), wantErr: ErrMalformed, wantMsg: "node 0: no role"},
		{name: "unknown role", reply: oneShard(A{"port", 1, "role", "arbiter"}), wantErr: ErrMalformed, wantMsg: `unknown role "arbiter"`},
		{name: "role is an integer", reply: oneShard(A{"port", 1, "role", 1}), wantErr: ErrMalformed, wantMsg: "role is an integer"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseShards(c.reply, c.asked)
			checkParse(t, c, got, err)
			if err == nil {
				checkTable(t, got)
			}
		})
	}
}

func TestParseShardsFields(t *testing.T) {
	reply := resp(A{A{"slots", A{0, 16383}, "nodes", A{
		A{"id", idA, "port", 7100, "ip", "127.0.0.1", "endpoint", "127.0.0.1", "hostname", "node-a.example",
			"role", "master", "replication-offset", 5, "health", "online"},
		A{"id", idB, "port", 7101, "ip", "127.0.0.1", "endpoint", "127.0.0.1",
			"role", "replica", "replication-offset", 0, "health", "loading"},
	}}})
	tab, err := ParseShards(reply, "127.0.0.1:7100")
	if err != nil {
		t.Fatal(err)
	}
	wantMaster := NodeInfo{ID: idA, Addr: "127.0.0.1:7100", Hostname: "node-a.example", Role: RoleMaster, Health: HealthOnline}
	if got := tab.Master(42); got != wantMaster {
		t.Errorf("Master = %+v, want %+v", got, wantMaster)
	}
	wantReplica := NodeInfo{ID: idB, Addr: "127.0.0.1:7101", Role: RoleReplica, Health: HealthLoading}
	if got := tab.Shards()[0].Replicas; len(got) != 1 || got[0] != wantReplica {
		t.Errorf("Replicas of the shard = %+v, want [%+v]", got, wantReplica)
	}
	if got := tab.Replicas(42); len(got) != 0 {
		t.Errorf("Replicas(42) offers a loading replica for reads: %+v", got)
	}
	if got := tab.Nodes(); len(got) != 2 || got[1] != wantReplica {
		t.Errorf("Nodes = %+v, want the loading replica listed", got)
	}
}

func TestParseShardsTLS(t *testing.T) {
	both := oneShard(
		A{"id", idA, "port", 7100, "tls-port", 8100, "ip", "127.0.0.1", "endpoint", "127.0.0.1", "role", "master"},
		A{"id", idB, "tls-port", 8101, "ip", "127.0.0.1", "endpoint", "127.0.0.1", "role", "replica"},
		A{"id", idC, "port", 7102, "ip", "127.0.0.1", "endpoint", "127.0.0.1", "role", "replica"},
		A{"id", idD, "port", 7103, "tls-port", 0, "ip", "127.0.0.1", "endpoint", "127.0.0.1", "role", "replica"},
	)
	cases := []struct {
		name  string
		parse func(any, string) (*Table, error)
		want  string
	}{
		{"plain", ParseShards, "0-16383 127.0.0.1:7100 (127.0.0.1:7102 127.0.0.1:7103 127.0.0.1:8101)"},
		{"tls", ParseShardsTLS, "0-16383 127.0.0.1:8100 (127.0.0.1:7102 127.0.0.1:7103 127.0.0.1:8101)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tab, err := c.parse(both, "127.0.0.1:8100")
			if err != nil {
				t.Fatal(err)
			}
			if tab.String() != c.want {
				t.Fatalf("table %s, want %s", tab, c.want)
			}
		})
	}
}

func TestParseShardsErrorsAreMalformed(t *testing.T) {
	_, err := ParseShards(resp(A{A{"slots", A{0, "x"}, "nodes", A{}}}), "")
	if !errors.Is(err, ErrMalformed) || errors.Is(err, ErrIncomplete) {
		t.Fatalf("err = %v, want ErrMalformed only", err)
	}
	_, err = ParseShards(A{}, "")
	if errors.Is(err, ErrMalformed) || !errors.Is(err, ErrIncomplete) {
		t.Fatalf("err = %v, want ErrIncomplete only", err)
	}
}
