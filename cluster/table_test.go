package cluster

import (
	"errors"
	"strings"
	"testing"
)

func node(addr string) NodeInfo { return NodeInfo{Addr: addr} }

// threeShards is a 3-master table: 7000 has 0-5460 with replica 7003,
// 7001 has 5461-10922 with replicas 7005 (loading) and 7004, 7002 has
// 10923-16383 without replica. The shards are given out of order.
func threeShards() []Shard {
	return []Shard{
		{Master: node("127.0.0.1:7002"), Ranges: []SlotRange{{10923, 16383}}},
		{Master: node("127.0.0.1:7000"), Replicas: []NodeInfo{node("127.0.0.1:7003")}, Ranges: []SlotRange{{0, 5460}}},
		{Master: node("127.0.0.1:7001"),
			Replicas: []NodeInfo{{Addr: "127.0.0.1:7005", Health: HealthLoading}, node("127.0.0.1:7004")},
			Ranges:   []SlotRange{{5461, 10922}}},
	}
}

func mustTable(t testing.TB, shards []Shard) *Table {
	t.Helper()
	tab, err := NewTable(shards)
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

func TestNewTableErrors(t *testing.T) {
	full := []SlotRange{{0, SlotCount - 1}}
	cases := []struct {
		name    string
		shards  []Shard
		wantErr error
		wantMsg string
	}{
		{"no shards", nil, ErrIncomplete, "slots 0-16383 not covered"},
		{"gap in the middle", []Shard{
			{Master: node("a:1"), Ranges: []SlotRange{{0, 5460}}},
			{Master: node("c:1"), Ranges: []SlotRange{{10923, 16383}}},
		}, ErrIncomplete, "slots 5461-10922 not covered"},
		{"last slot missing", []Shard{{Master: node("a:1"), Ranges: []SlotRange{{0, 16382}}}}, ErrIncomplete, "slot 16383 not covered"},
		{"first slot missing", []Shard{{Master: node("a:1"), Ranges: []SlotRange{{1, 16383}}}}, ErrIncomplete, "slot 0 not covered"},
		{"overlap", []Shard{
			{Master: node("a:1"), Ranges: []SlotRange{{0, 100}}},
			{Master: node("b:1"), Ranges: []SlotRange{{50, 16383}}},
		}, ErrMalformed, "slot 50 is owned by both a:1 (shard 0) and b:1 (shard 1)"},
		{"overlap within a shard", []Shard{{Master: node("a:1"), Ranges: []SlotRange{{0, 100}, {100, 16383}}}},
			ErrMalformed, "slot 100 is owned by both a:1 (shard 0) and a:1 (shard 0)"},
		{"range beyond the last slot", []Shard{{Master: node("a:1"), Ranges: []SlotRange{{0, 16384}}}},
			ErrMalformed, "shard 0: slot range 0-16384 is not within 0-16383"},
		{"negative start", []Shard{{Master: node("a:1"), Ranges: []SlotRange{{-1, 16383}}}},
			ErrMalformed, "slot range -1-16383"},
		{"reversed", []Shard{{Master: node("a:1"), Ranges: []SlotRange{{5, 4}}}}, ErrMalformed, "slot range 5-4"},
		{"master without address", []Shard{{Ranges: full}}, ErrMalformed, "shard 0: master has no address"},
		{"replica without address", []Shard{{Master: node("a:1"), Replicas: []NodeInfo{{}}, Ranges: full}},
			ErrMalformed, "shard 0 replica 0: no address"},
		{"two masters at one address", []Shard{
			{Master: node("a:1"), Ranges: full},
			{Master: node("a:1")},
		}, ErrMalformed, "shard 1: address a:1 is already used in shard 0"},
		{"replica at a master's address", []Shard{
			{Master: node("a:1"), Ranges: full},
			{Master: node("b:1"), Replicas: []NodeInfo{node("a:1")}},
		}, ErrMalformed, "shard 1 replica 0: address a:1 is already used in shard 0"},
		{"replica listed twice", []Shard{
			{Master: node("a:1"), Replicas: []NodeInfo{node("r:1"), node("r:1")}, Ranges: full},
		}, ErrMalformed, "shard 0 replica 1: address r:1 is already used in shard 0"},
		{"too many shards", make([]Shard, maxShards+1), ErrMalformed, "65536 shards, at most 65535"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tab, err := NewTable(c.shards)
			if err == nil {
				t.Fatalf("got table\n%s\nwant an error", tab)
			}
			if !errors.Is(err, c.wantErr) || !strings.Contains(err.Error(), c.wantMsg) {
				t.Fatalf("error %q, want one wrapping %v and saying %q", err, c.wantErr, c.wantMsg)
			}
			if tab != nil {
				t.Fatal("got a table along with the error")
			}
		})
	}
}

func TestTableLookups(t *testing.T) {
	tab := mustTable(t, threeShards())
	checkTable(t, tab)
	for _, c := range []struct {
		slot     int
		shard    int
		master   string
		replicas string
	}{
		{0, 0, "127.0.0.1:7000", "127.0.0.1:7003"},
		{5460, 0, "127.0.0.1:7000", "127.0.0.1:7003"},
		{5461, 1, "127.0.0.1:7001", "127.0.0.1:7004"}, // 7005 is loading
		{10922, 1, "127.0.0.1:7001", "127.0.0.1:7004"},
		{10923, 2, "127.0.0.1:7002", ""},
		{16383, 2, "127.0.0.1:7002", ""},
	} {
		if got := tab.ShardOf(c.slot); got != c.shard {
			t.Errorf("ShardOf(%d) = %d, want %d", c.slot, got, c.shard)
		}
		if got := tab.Master(c.slot); got.Addr != c.master || got.Role != RoleMaster {
			t.Errorf("Master(%d) = %+v, want %s", c.slot, got, c.master)
		}
		var addrs []string
		for _, r := range tab.Replicas(c.slot) {
			addrs = append(addrs, r.Addr)
			if r.Role != RoleReplica {
				t.Errorf("replica %s has role %q", r.Addr, r.Role)
			}
		}
		if got := strings.Join(addrs, " "); got != c.replicas {
			t.Errorf("Replicas(%d) = %q, want %q", c.slot, got, c.replicas)
		}
	}
	for _, slot := range []int{-1, SlotCount, 1 << 40} {
		if tab.ShardOf(slot) != -1 || tab.Master(slot) != (NodeInfo{}) || tab.Replicas(slot) != nil {
			t.Errorf("slot %d out of range gives a node", slot)
		}
	}
	var masters []string
	for _, m := range tab.Masters() {
		masters = append(masters, m.Addr)
	}
	if got := strings.Join(masters, " "); got != "127.0.0.1:7000 127.0.0.1:7001 127.0.0.1:7002" {
		t.Errorf("Masters = %s, want them by first slot", got)
	}
	var nodes []string
	for _, n := range tab.Nodes() {
		nodes = append(nodes, n.Addr+"/"+n.Role)
	}
	want := "127.0.0.1:7000/master 127.0.0.1:7001/master 127.0.0.1:7002/master " +
		"127.0.0.1:7003/replica 127.0.0.1:7004/replica 127.0.0.1:7005/replica"
	if got := strings.Join(nodes, " "); got != want {
		t.Errorf("Nodes = %s\nwant     %s", got, want)
	}
}

func TestTableIsImmutable(t *testing.T) {
	shards := threeShards()
	tab := mustTable(t, shards)
	before := tab.String()
	// Changing the input, or what the accessors return, must not change
	// the table.
	shards[1].Replicas[0].Addr = "changed:1"
	shards[1].Ranges[0].End = 0
	got := tab.Shards()
	got[0].Master.Addr = "changed:2"
	got[0].Replicas[0].Addr = "changed:3"
	got[0].Ranges[0].Start = 9
	tab.Masters()[0].Addr = "changed:4"
	tab.Nodes()[3].Addr = "changed:5"
	if after := tab.String(); after != before {
		t.Fatalf("table changed:\n%s\nwas:\n%s", after, before)
	}
}

func TestTableCanonical(t *testing.T) {
	a := mustTable(t, threeShards())
	rev := threeShards()
	rev[0], rev[2] = rev[2], rev[0] // now 7001, 7000, 7002
	rev[0].Replicas[0], rev[0].Replicas[1] = rev[0].Replicas[1], rev[0].Replicas[0]
	// The same ownership cut in more pieces.
	rev[2].Ranges = []SlotRange{{10923, 16000}, {16001, 16383}}
	b := mustTable(t, rev)
	if a.String() != b.String() || !a.Equal(b) {
		t.Fatalf("tables of one topology differ:\n%s\n---\n%s", a, b)
	}
	want := "0-5460 127.0.0.1:7000 (127.0.0.1:7003)\n" +
		"5461-10922 127.0.0.1:7001 (127.0.0.1:7004 127.0.0.1:7005 loading)\n" +
		"10923-16383 127.0.0.1:7002 ()"
	if a.String() != want {
		t.Fatalf("String:\n%s\nwant:\n%s", a, want)
	}
}

func TestTableEqual(t *testing.T) {
	base := mustTable(t, threeShards())
	change := func(f func([]Shard) []Shard) *Table {
		return mustTable(t, f(threeShards()))
	}
	cases := []struct {
		name  string
		other *Table
		equal bool
	}{
		{"same", mustTable(t, threeShards()), true},
		{"ids, hostnames and health of masters ignored", change(func(s []Shard) []Shard {
			s[0].Master.ID, s[0].Master.Hostname, s[0].Master.Health = idA, "x.example", HealthFail
			return s
		}), true},
		{"an extra shard without slots ignored", change(func(s []Shard) []Shard {
			return append(s, Shard{Master: node("127.0.0.1:7009")})
		}), true},
		{"a loading replica missing is the same read set", change(func(s []Shard) []Shard {
			s[2].Replicas = s[2].Replicas[1:]
			return s
		}), true},
		{"a slot moved", change(func(s []Shard) []Shard {
			s[0].Ranges = []SlotRange{{10922, 16383}}
			s[2].Ranges = []SlotRange{{5461, 10921}}
			return s
		}), false},
		{"another master address", change(func(s []Shard) []Shard {
			s[0].Master.Addr = "127.0.0.1:7009"
			return s
		}), false},
		{"a readable replica more", change(func(s []Shard) []Shard {
			s[0].Replicas = []NodeInfo{node("127.0.0.1:7009")}
			return s
		}), false},
		{"a replica finished loading", change(func(s []Shard) []Shard {
			s[2].Replicas[0].Health = HealthOnline
			return s
		}), false},
		{"a replica failed", change(func(s []Shard) []Shard {
			s[1].Replicas[0].Health = HealthFail
			return s
		}), false},
		{"nil", nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := base.Equal(c.other); got != c.equal {
				t.Errorf("base.Equal = %v, want %v\n%s\n---\n%s", got, c.equal, base, c.other)
			}
			if got := c.other.Equal(base); got != c.equal {
				t.Errorf("other.Equal(base) = %v, want %v", got, c.equal)
			}
		})
	}
	var none *Table
	if !none.Equal(nil) {
		t.Error("two nil tables differ")
	}
}

func TestTableWithSlotOwner(t *testing.T) {
	base := mustTable(t, threeShards())
	withIDs := threeShards()
	withIDs[1].Replicas[0] = NodeInfo{ID: idD, Addr: "127.0.0.1:7003", Hostname: "r.example", Health: HealthOnline}
	named := mustTable(t, withIDs)
	cases := []struct {
		name string
		from *Table
		slot int
		addr string
		want string
	}{
		{"to another known master", base, 5460, "127.0.0.1:7001",
			"0-5459 127.0.0.1:7000 (127.0.0.1:7003)\n" +
				"5460-10922 127.0.0.1:7001 (127.0.0.1:7004 127.0.0.1:7005 loading)\n" +
				"10923-16383 127.0.0.1:7002 ()"},
		{"into the middle of another range", base, 100, "127.0.0.1:7002",
			"0-99,101-5460 127.0.0.1:7000 (127.0.0.1:7003)\n" +
				"100,10923-16383 127.0.0.1:7002 ()\n" +
				"5461-10922 127.0.0.1:7001 (127.0.0.1:7004 127.0.0.1:7005 loading)"},
		{"to an unknown node", base, 16383, "10.0.0.1:7000",
			"0-5460 127.0.0.1:7000 (127.0.0.1:7003)\n" +
				"5461-10922 127.0.0.1:7001 (127.0.0.1:7004 127.0.0.1:7005 loading)\n" +
				"10923-16382 127.0.0.1:7002 ()\n" +
				"16383 10.0.0.1:7000 ()"},
		{"to a promoted replica", base, 0, "127.0.0.1:7003",
			"0 127.0.0.1:7003 ()\n" +
				"1-5460 127.0.0.1:7000 ()\n" +
				"5461-10922 127.0.0.1:7001 (127.0.0.1:7004 127.0.0.1:7005 loading)\n" +
				"10923-16383 127.0.0.1:7002 ()"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := c.from.String()
			got := c.from.WithSlotOwner(c.slot, c.addr)
			if got.String() != c.want {
				t.Fatalf("table:\n%s\nwant:\n%s", got, c.want)
			}
			if c.from.String() != before {
				t.Fatal("WithSlotOwner changed the original table")
			}
			if m := got.Master(c.slot); m.Addr != c.addr || m.Role != RoleMaster {
				t.Fatalf("Master(%d) = %+v, want %s", c.slot, m, c.addr)
			}
			checkTable(t, got)
		})
	}

	promoted := named.WithSlotOwner(0, "127.0.0.1:7003").Master(0)
	if want := (NodeInfo{ID: idD, Addr: "127.0.0.1:7003", Hostname: "r.example", Role: RoleMaster}); promoted != want {
		t.Errorf("promoted replica = %+v, want %+v", promoted, want)
	}

	// Moving every slot of a shard away leaves it without slots.
	moved := base
	for slot := 10923; slot < SlotCount; slot++ {
		moved = moved.WithSlotOwner(slot, "127.0.0.1:7000")
	}
	if want := "0-5460,10923-16383 127.0.0.1:7000 (127.0.0.1:7003)\n" +
		"5461-10922 127.0.0.1:7001 (127.0.0.1:7004 127.0.0.1:7005 loading)\n" +
		"no-slots 127.0.0.1:7002 ()"; moved.String() != want {
		t.Errorf("after moving every slot of 7002:\n%s\nwant:\n%s", moved, want)
	}

	for _, c := range []struct {
		name string
		slot int
		addr string
	}{
		{"already the owner", 42, "127.0.0.1:7000"},
		{"empty address", 42, ""},
		{"negative slot", -1, "127.0.0.1:7001"},
		{"slot too big", SlotCount, "127.0.0.1:7001"},
	} {
		if got := base.WithSlotOwner(c.slot, c.addr); got != base {
			t.Errorf("%s: WithSlotOwner returned a new table", c.name)
		}
	}
	var none *Table
	if none.WithSlotOwner(1, "a:1") != nil {
		t.Error("nil table gave a table")
	}
}

func TestNilTable(t *testing.T) {
	var tab *Table
	if tab.Shards() != nil || tab.Masters() != nil || tab.Nodes() != nil || tab.ShardOf(0) != -1 ||
		tab.Master(0) != (NodeInfo{}) || tab.Replicas(0) != nil || tab.String() != "<nil>" {
		t.Fatal("a nil table returns something")
	}
}

func TestTableLookupsDoNotAllocate(t *testing.T) {
	tab := mustTable(t, threeShards())
	var sink int
	allocs := testing.AllocsPerRun(100, func() {
		for slot := 0; slot < SlotCount; slot += 97 {
			sink += len(tab.Master(slot).Addr) + len(tab.Replicas(slot)) + tab.ShardOf(slot)
		}
	})
	if allocs != 0 {
		t.Fatalf("Master/Replicas/ShardOf allocate %v times per run", allocs)
	}
	_ = sink
}

var sinkNode NodeInfo

func BenchmarkMaster(b *testing.B) {
	tab := mustTable(b, threeShards())
	b.ReportAllocs()
	slot := 0
	for b.Loop() {
		sinkNode = tab.Master(slot)
		slot = (slot + 1) & (SlotCount - 1)
	}
}
