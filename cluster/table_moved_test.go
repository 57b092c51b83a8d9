package cluster

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestWithSlotOwnerFastPathMatchesRebuild moves random slots between the
// masters of a 20-shard table, one at a time, and checks every result
// against a table built from scratch with NewTable from an owner map kept
// by the test: the same String (shards, order, ranges, replicas), Equal,
// and an unchanged original.
func TestWithSlotOwnerFastPathMatchesRebuild(t *testing.T) {
	const n = 20
	rng := rand.New(rand.NewPCG(3, 4))
	owner := make([]int, SlotCount)
	for s := range owner {
		owner[s] = s * n / SlotCount
	}
	shardsFor := func() []Shard {
		shards := make([]Shard, n+1)
		for i := range shards {
			shards[i] = Shard{
				Master:   NodeInfo{ID: fmt.Sprintf("m%d", i), Addr: fmt.Sprintf("10.0.0.%d:6379", i+1)},
				Replicas: []NodeInfo{{ID: fmt.Sprintf("r%d", i), Addr: fmt.Sprintf("10.0.1.%d:6379", i+1)}},
			}
		}
		for s := 0; s < SlotCount; s++ {
			e := s
			for e+1 < SlotCount && owner[e+1] == owner[s] {
				e++
			}
			shards[owner[s]].Ranges = append(shards[owner[s]].Ranges, SlotRange{Start: s, End: e})
			s = e
		}
		return shards // shard n has no slots
	}
	cur, err := NewTable(shardsFor())
	if err != nil {
		t.Fatal(err)
	}
	fast := 0
	for step := range 2000 {
		slot := rng.IntN(SlotCount)
		to := rng.IntN(n + 1)
		if step%50 == 0 {
			slot = 0 // a shard's first slot: the order may change
		}
		before := cur.String()
		next := cur.WithSlotOwner(slot, fmt.Sprintf("10.0.0.%d:6379", to+1))
		if cur.String() != before {
			t.Fatalf("step %d: WithSlotOwner changed the original table", step)
		}
		owner[slot] = to
		want, err := NewTable(shardsFor())
		if err != nil {
			t.Fatal(err)
		}
		if next.String() != want.String() || !next.Equal(want) {
			t.Fatalf("step %d: slot %d to shard %d:\ngot\n%s\nwant\n%s", step, slot, to, next, want)
		}
		if next.SameNodes(cur) {
			fast++
		}
		if !next.SameNodes(want) && next.SameNodes(cur) {
			t.Fatalf("step %d: SameNodes disagrees with the rebuilt table", step)
		}
		cur = next
	}
	if fast < 1000 {
		t.Errorf("only %d of 2000 moves kept the nodes: the fast path was barely tested", fast)
	}
}

func TestSameNodes(t *testing.T) {
	a := mustTable(t, threeShards())
	b := mustTable(t, threeShards())
	other := threeShards()
	other[1].Replicas = nil // 7000 loses its replica
	c := mustTable(t, other)
	var nilTable *Table
	tests := []struct {
		name string
		x, y *Table
		want bool
	}{
		{"same table", a, a, true},
		{"built twice", a, b, true},
		{"a replica less", a, c, false},
		{"nil and nil", nilTable, nilTable, true},
		{"nil and not", nilTable, a, false},
	}
	for _, tc := range tests {
		if got := tc.x.SameNodes(tc.y); got != tc.want {
			t.Errorf("%s: SameNodes = %v, want %v", tc.name, got, tc.want)
		}
	}
}
