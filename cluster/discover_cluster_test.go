package cluster

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"go.uber.org/goleak"
)

// TestRealCluster checks discovery, the parsers and redirect parsing
// against one real 3-master, 3-replica cluster, shared by the subtests to
// keep the run short. The subtests leave the cluster as they found it.
func TestRealCluster(t *testing.T) {
	redistest.Require(t)
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) }) // runs last, after the cluster stopped
	start := time.Now()
	c := redistest.StartClusterTB(t, 3, 1, redistest.Options{})
	t.Logf("3+3 cluster ready in %v", time.Since(start).Round(time.Millisecond))
	seeds := c.Seeds()

	start = time.Now()
	table, err := Discover(testContext(t), seeds, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Discover took %v; table:\n%s", time.Since(start).Round(time.Microsecond), table)

	t.Run("every seed gives the same table", func(t *testing.T) {
		for _, seed := range seeds {
			got, err := Discover(testContext(t), []string{seed}, nil)
			if err != nil {
				t.Fatalf("seed %s: %v", seed, err)
			}
			if !got.Equal(table) || got.String() != table.String() {
				t.Fatalf("seed %s gives\n%s\nwant\n%s", seed, got, table)
			}
		}
	})

	t.Run("the table is the one CLUSTER NODES describes", func(t *testing.T) {
		masters := c.Masters()
		if len(masters) != 3 {
			t.Fatalf("the cluster reports %d masters", len(masters))
		}
		wantRanges := []string{"0-5460", "5461-10922", "10923-16383"}
		shards := table.Shards()
		if len(shards) != 3 {
			t.Fatalf("%d shards, want 3:\n%s", len(shards), table)
		}
		for i, m := range masters {
			s := shards[i]
			if s.Master.Addr != m.Addr {
				t.Errorf("shard %d master %s, the cluster says %s", i, s.Master.Addr, m.Addr)
			}
			if len(s.Ranges) != 1 || fmt.Sprintf("%d-%d", s.Ranges[0].Start, s.Ranges[0].End) != wantRanges[i] {
				t.Errorf("shard %d ranges %v, want %s", i, s.Ranges, wantRanges[i])
			}
			rep, err := c.ReplicaOf(m)
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Replicas) != 1 || s.Replicas[0].Addr != rep.Addr || s.Replicas[0].Health != HealthOnline {
				t.Errorf("shard %d replicas %+v, the cluster says %s", i, s.Replicas, rep.Addr)
			}
			if len(s.Master.ID) != 40 || s.Master.Health != HealthOnline {
				t.Errorf("shard %d master %+v: want a 40-character id and online", i, s.Master)
			}
		}
		for _, n := range c.Nodes {
			text, err := redis.String(dialRedis(t, n.Addr).Do("CLUSTER", "NODES"))
			if err != nil {
				t.Fatal(err)
			}
			got, err := ParseNodes(text, n.Addr)
			if err != nil {
				t.Fatalf("CLUSTER NODES of %s: %v\n%s", n.Addr, err, text)
			}
			if !got.Equal(table) {
				t.Fatalf("CLUSTER NODES of %s gives\n%s\nwant\n%s", n.Addr, got, table)
			}
		}
	})

	t.Run("CLUSTER SHARDS and CLUSTER SLOTS agree on every node", func(t *testing.T) {
		for _, n := range c.Nodes {
			conn := dialRedis(t, n.Addr)
			shardsReply, err := conn.Do("CLUSTER", "SHARDS")
			if err != nil {
				t.Fatal(err)
			}
			slotsReply, err := conn.Do("CLUSTER", "SLOTS")
			if err != nil {
				t.Fatal(err)
			}
			a, err := ParseShards(shardsReply, n.Addr)
			if err != nil {
				t.Fatal(err)
			}
			b, err := ParseSlots(slotsReply, n.Addr)
			if err != nil {
				t.Fatal(err)
			}
			if !a.Equal(b) || !a.Equal(table) {
				t.Fatalf("node %s: CLUSTER SHARDS gives\n%s\nCLUSTER SLOTS gives\n%s", n.Addr, a, b)
			}
			for i, s := range b.Shards() { // CLUSTER SLOTS has the ids too
				if s.Master.ID != a.Shards()[i].Master.ID {
					t.Fatalf("node %s: shard %d ids differ: %s vs %s", n.Addr, i, s.Master.ID, a.Shards()[i].Master.ID)
				}
			}
		}
	})

	t.Run("a dead first seed is skipped", func(t *testing.T) {
		dead := deadAddr(t)
		got, err := Discover(testContext(t), []string{dead, seeds[1]}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Equal(table) {
			t.Fatalf("got\n%s\nwant\n%s", got, table)
		}
	})

	t.Run("keys route to the node that serves them", func(t *testing.T) {
		const n = 2000
		keys := make([]string, n)
		for i := range keys {
			keys[i] = fmt.Sprintf("route:%d", i)
			if i%10 == 0 {
				keys[i] = fmt.Sprintf("{user%d}.profile", i)
			}
		}
		// The server's slot of every key.
		conn := dialRedis(t, seeds[0])
		for _, k := range keys {
			conn.Send("CLUSTER", "KEYSLOT", k)
		}
		if err := conn.Flush(); err != nil {
			t.Fatal(err)
		}
		byNode := map[string][]string{}
		for _, k := range keys {
			slot, err := redis.Int(conn.Receive())
			if err != nil {
				t.Fatal(err)
			}
			if got := Slot(k); got != slot {
				t.Fatalf("Slot(%q) = %d, CLUSTER KEYSLOT says %d", k, got, slot)
			}
			addr := table.Master(slot).Addr
			byNode[addr] = append(byNode[addr], k)
		}
		if len(byNode) != 3 {
			t.Fatalf("2000 keys went to %d masters", len(byNode))
		}
		// Each master must serve its keys itself: any key it does not own
		// would come back as MOVED. Each master's replica must serve them
		// too after READONLY.
		for addr, ks := range byNode {
			checkServed(t, addr, ks, false)
			reps := table.Replicas(Slot(ks[0]))
			if len(reps) != 1 {
				t.Fatalf("master %s: %d replicas for reads", addr, len(reps))
			}
			checkServed(t, reps[0].Addr, ks, true)
		}
	})

	t.Run("a real MOVED reply parses to the owner", func(t *testing.T) {
		key := "moved:key"
		slot := Slot(key)
		owner := table.Master(slot)
		other := table.Master((slot + 6000) % SlotCount)
		if other.Addr == owner.Addr {
			t.Fatal("test setup: same master")
		}
		_, err := dialRedis(t, other.Addr).Do("GET", key)
		var re redis.Error
		if !errors.As(err, &re) {
			t.Fatalf("GET on a non-owner: %v, want an error reply", err)
		}
		if ErrorCode(re.Error()) != "MOVED" {
			t.Fatalf("GET on a non-owner: %v", err)
		}
		r, ok := ParseRedirect(re.Error(), other.Addr)
		if !ok || r != (Redirect{Kind: Moved, Slot: slot, Addr: owner.Addr}) {
			t.Fatalf("ParseRedirect(%q) = %+v, %v; want MOVED %d %s", re, r, ok, slot, owner.Addr)
		}
		if table.WithSlotOwner(r.Slot, r.Addr) != table {
			t.Fatal("WithSlotOwner with the current owner made a new table")
		}
		_, err = dialRedis(t, owner.Addr).Do("MSET", "a", "1", "b", "2")
		if !errors.As(err, &re) || ErrorCode(re.Error()) != "CROSSSLOT" {
			t.Fatalf("MSET across slots: %v, want CROSSSLOT", err)
		}
	})

	t.Run("ASK, TRYAGAIN and migration markers", func(t *testing.T) {
		slot := Slot("{ask}")
		src := table.Master(slot)
		dst := table.Master((slot + 6000) % SlotCount)
		srcConn, dstConn := dialRedis(t, src.Addr), dialRedis(t, dst.Addr)
		if _, err := srcConn.Do("SET", "{ask}exists", "v"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			// Put the slot back, even when the test failed half-way.
			for _, conn := range []redis.Conn{dialRedis(t, dst.Addr), dialRedis(t, src.Addr)} {
				if _, err := conn.Do("CLUSTER", "SETSLOT", slot, "STABLE"); err != nil {
					t.Errorf("SETSLOT STABLE: %v", err)
				}
			}
			dialRedis(t, src.Addr).Do("DEL", "{ask}exists")
		})
		if _, err := dstConn.Do("CLUSTER", "SETSLOT", slot, "IMPORTING", src.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := srcConn.Do("CLUSTER", "SETSLOT", slot, "MIGRATING", dst.ID); err != nil {
			t.Fatal(err)
		}

		_, err := srcConn.Do("GET", "{ask}missing")
		var re redis.Error
		if !errors.As(err, &re) || ErrorCode(re.Error()) != "ASK" {
			t.Fatalf("GET of a missing key in a migrating slot: %v, want ASK", err)
		}
		r, ok := ParseRedirect(re.Error(), src.Addr)
		if !ok || r != (Redirect{Kind: Ask, Slot: slot, Addr: dst.Addr}) {
			t.Fatalf("ParseRedirect(%q) = %+v, %v; want ASK %d %s", re, r, ok, slot, dst.Addr)
		}
		_, err = srcConn.Do("MGET", "{ask}exists", "{ask}missing")
		if !errors.As(err, &re) || ErrorCode(re.Error()) != "TRYAGAIN" {
			t.Fatalf("MGET of a present and a missing key: %v, want TRYAGAIN", err)
		}

		// The slot still belongs to src, whatever the markers say.
		for _, node := range []NodeInfo{src, dst} {
			text, err := redis.String(dialRedis(t, node.Addr).Do("CLUSTER", "NODES"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(text, fmt.Sprintf("[%d-", slot)) {
				t.Fatalf("CLUSTER NODES of %s shows no migration marker:\n%s", node.Addr, text)
			}
			got, err := ParseNodes(text, node.Addr)
			if err != nil {
				t.Fatal(err)
			}
			if !got.Equal(table) {
				t.Fatalf("during the migration CLUSTER NODES of %s gives\n%s\nwant\n%s", node.Addr, got, table)
			}
		}
		got, err := Discover(testContext(t), []string{src.Addr}, nil)
		if err != nil || !got.Equal(table) {
			t.Fatalf("Discover during the migration: %v\n%s", err, got)
		}
	})
}

// checkServed reads keys from the node at addr in one pipeline and fails
// the test if the node redirects any of them.
func checkServed(t *testing.T, addr string, keys []string, readonly bool) {
	t.Helper()
	conn := dialRedis(t, addr)
	if readonly {
		if _, err := conn.Do("READONLY"); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range keys {
		conn.Send("GET", k)
	}
	if err := conn.Flush(); err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if _, err := conn.Receive(); err != nil {
			t.Fatalf("GET %s on %s (readonly %v): %v", k, addr, readonly, err)
		}
	}
}
