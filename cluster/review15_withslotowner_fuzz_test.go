package cluster

import (
	"fmt"
	"testing"
)

// FuzzWithSlotOwner applies MOVEDs to a table parsed from a fuzzed
// CLUSTER SHARDS reply: to a master (with or without slots), to a
// replica (promoted) and to a node the table does not list. Every result
// must be a valid table in which the slot is at the named address, every
// other slot keeps its master's address, the original is unchanged, and
// rebuilding it from its shards gives the same table (so the fast path
// and the rebuild agree).
func FuzzWithSlotOwner(f *testing.F) {
	for _, r := range replySeeds() {
		f.Add(encodeReply(r), []byte{0, 0, 1, 0x10, 0, 2, 0xff, 0xff, 3, 0x3f, 0xff, 4})
	}
	f.Fuzz(func(t *testing.T, data, moves []byte) {
		tab, err := ParseShards(decodeReply(data), "127.0.0.1:7000")
		if err != nil {
			return
		}
		nodes := tab.Nodes()
		for len(moves) >= 3 {
			slot := (int(moves[0])<<8 | int(moves[1])) % SlotCount
			pick := int(moves[2])
			moves = moves[3:]
			addr := fmt.Sprintf("10.9.9.%d:7000", pick%7) // a node not listed
			if len(nodes) > 0 && pick%2 == 0 {
				addr = nodes[pick/2%len(nodes)].Addr
			}
			before := tab.String()
			var owners [SlotCount]string
			for s := range SlotCount {
				owners[s] = tab.Master(s).Addr
			}
			next := tab.WithSlotOwner(slot, addr)
			if tab.String() != before {
				t.Fatalf("WithSlotOwner(%d, %s) changed the original table", slot, addr)
			}
			if next.Master(slot).Addr != addr {
				if next != tab || len(tab.Shards()) < maxShards {
					t.Fatalf("WithSlotOwner(%d, %s): slot %d is at %s\n%s", slot, addr, slot, next.Master(slot).Addr, next)
				}
			}
			for s := range SlotCount {
				if s != slot && next.Master(s).Addr != owners[s] {
					t.Fatalf("WithSlotOwner(%d, %s) moved slot %d from %s to %s", slot, addr, s, owners[s], next.Master(s).Addr)
				}
			}
			checkTable(t, next)
			tab, nodes = next, next.Nodes()
		}
	})
}
