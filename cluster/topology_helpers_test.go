package cluster

import (
	"errors"
	"strings"
	"testing"
)

// A is a reply array written as a Go literal; resp converts it.
type A = []any

// resp converts a reply written with Go literals into the RESP2 shapes
// redigo returns: string -> []byte (a bulk string), int -> int64, arrays
// recursively. nil stays nil (a null bulk string).
func resp(v any) any {
	switch v := v.(type) {
	case string:
		return []byte(v)
	case int:
		return int64(v)
	case []any:
		out := make([]any, len(v))
		for i := range v {
			out[i] = resp(v[i])
		}
		return out
	}
	return v
}

// Node ids of the sample clusters: 40 characters each.
var (
	idA = strings.Repeat("a", 40)
	idB = strings.Repeat("b", 40)
	idC = strings.Repeat("c", 40)
	idD = strings.Repeat("d", 40)
	idE = strings.Repeat("e", 40)
	idF = strings.Repeat("f", 40)
)

// shardNode is a CLUSTER SHARDS node map as Redis 7.0 sends it with
// cluster-preferred-endpoint-type ip.
func shardNode(id string, port int, role, health string) A {
	return A{"id", id, "port", port, "ip", "127.0.0.1", "endpoint", "127.0.0.1",
		"role", role, "replication-offset", 1234, "health", health}
}

// sampleShards is the CLUSTER SHARDS reply of a healthy 3+3 cluster on
// 127.0.0.1:7000-7005, listed in the order a node might send it (not
// sorted by slot).
func sampleShards() any {
	return resp(A{
		A{"slots", A{5461, 10922}, "nodes", A{
			shardNode(idB, 7001, "master", "online"),
			shardNode(idF, 7005, "replica", "online"),
		}},
		A{"slots", A{0, 5460}, "nodes", A{
			shardNode(idE, 7004, "replica", "online"),
			shardNode(idA, 7000, "master", "online"),
		}},
		A{"slots", A{10923, 16383}, "nodes", A{
			shardNode(idC, 7002, "master", "online"),
			shardNode(idD, 7003, "replica", "online"),
		}},
	})
}

// slotNode is a CLUSTER SLOTS node entry of Redis 7.0 with the ip type.
func slotNode(id string, port int) A {
	return A{"127.0.0.1", port, id, A{}}
}

// sampleSlots is the CLUSTER SLOTS reply of the same cluster as
// sampleShards.
func sampleSlots() any {
	return resp(A{
		A{10923, 16383, slotNode(idC, 7002), slotNode(idD, 7003)},
		A{0, 5460, slotNode(idA, 7000), slotNode(idE, 7004)},
		A{5461, 10922, slotNode(idB, 7001), slotNode(idF, 7005)},
	})
}

// sampleNodes is the CLUSTER NODES text of the same cluster, as node
// 7002 sends it while it migrates slot 12182 to 7000.
func sampleNodes() string {
	return idA + " 127.0.0.1:7000@17000 master - 0 1700000000000 1 connected 0-5460\n" +
		idB + " 127.0.0.1:7001@17001 master - 0 1700000000000 2 connected 5461-10922\n" +
		idC + " 127.0.0.1:7002@17002 myself,master - 0 1700000000000 3 connected 10923-16383 [12182->-" + idA + "]\n" +
		idD + " 127.0.0.1:7003@17003 slave " + idC + " 0 1700000000000 3 connected\n" +
		idE + " 127.0.0.1:7004@17004 slave " + idA + " 0 1700000000000 1 connected\n" +
		idF + " 127.0.0.1:7005@17005 slave " + idB + " 0 1700000000000 2 connected\n"
}

// sampleText is sampleShards, sampleSlots and sampleNodes as String
// renders them.
const sampleText = "0-5460 127.0.0.1:7000 (127.0.0.1:7004)\n" +
	"5461-10922 127.0.0.1:7001 (127.0.0.1:7005)\n" +
	"10923-16383 127.0.0.1:7002 (127.0.0.1:7003)"

// parseCase is one input of a parser and what must come out: either the
// table as String renders it, or an error that wraps want and contains
// wantMsg.
type parseCase struct {
	name    string
	reply   any
	asked   string
	text    string // the table, as String renders it
	wantErr error
	wantMsg string
}

// checkParse compares a parser's result with c.
func checkParse(t *testing.T, c parseCase, got *Table, err error) {
	t.Helper()
	if c.wantErr != nil {
		if err == nil {
			t.Fatalf("got table\n%s\nwant an error wrapping %v", got, c.wantErr)
		}
		if !errors.Is(err, c.wantErr) {
			t.Fatalf("error %q does not wrap %v", err, c.wantErr)
		}
		if !strings.Contains(err.Error(), c.wantMsg) {
			t.Fatalf("error %q does not say %q", err, c.wantMsg)
		}
		if !strings.HasPrefix(err.Error(), "shardis: ") {
			t.Fatalf("error %q does not start with \"shardis: \"", err)
		}
		if got != nil {
			t.Fatalf("got a table along with the error")
		}
		return
	}
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if s := got.String(); s != c.text {
		t.Fatalf("table:\n%s\nwant:\n%s", s, c.text)
	}
}

// checkTable checks invariants every table must hold: it passes NewTable
// again unchanged, and every slot maps to a shard whose ranges hold it.
func checkTable(t *testing.T, tab *Table) {
	t.Helper()
	again, err := NewTable(tab.Shards())
	if err != nil {
		t.Fatalf("NewTable(t.Shards()) rejects an accepted table: %v\n%s", err, tab)
	}
	if !again.Equal(tab) || again.String() != tab.String() {
		t.Fatalf("NewTable(t.Shards()) changed the table:\n%s\nwas:\n%s", again, tab)
	}
	shards := tab.Shards()
	for slot := range SlotCount {
		i := tab.ShardOf(slot)
		if i < 0 || i >= len(shards) {
			t.Fatalf("ShardOf(%d) = %d, not an index into %d shards", slot, i, len(shards))
		}
		if tab.Master(slot) != shards[i].Master || tab.Master(slot).Addr == "" {
			t.Fatalf("Master(%d) = %+v, shard %d has %+v", slot, tab.Master(slot), i, shards[i].Master)
		}
		in := false
		for _, r := range shards[i].Ranges {
			in = in || (r.Start <= slot && slot <= r.End)
		}
		if !in {
			t.Fatalf("slot %d maps to shard %d whose ranges %v do not hold it", slot, i, shards[i].Ranges)
		}
	}
}
