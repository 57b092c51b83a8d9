package cluster

import "slices"

// withSlotOfMaster is WithSlotOwner's fast path for the common case of a
// reshard: addr is already the master of another shard that serves
// slots, and moving slot keeps the shards in the same order (by first
// slot), so the canonical form does not change. The new table then shares its masters, readers and
// replica lists with t and differs only in the owner array and the
// ranges of the two shards involved, instead of being rebuilt node by
// node: at a thousand masters that is about 160 KiB per MOVED instead of
// a megabyte and a half. It returns nil when the fast path does not
// apply.
func (t *Table) withSlotOfMaster(slot int, addr string) *Table {
	to := -1
	for i, m := range t.masters {
		if m.Addr == addr {
			to = i
			break
		}
	}
	if to < 0 {
		return nil
	}
	from := int(t.owner[slot])
	if len(t.shards[to].Ranges) == 0 {
		return nil // a shard without slots gains one: it moves up the order
	}
	// Shards are ordered by first slot; only from's and to's can change.
	first := func(i int) int { return t.shards[i].Ranges[0].Start }
	fromFirst, toFirst := first(from), min(first(to), slot)
	if fromFirst == slot {
		fromFirst = -1
		for s := slot + 1; s < SlotCount; s++ {
			if int(t.owner[s]) == from {
				fromFirst = s
				break
			}
		}
		if fromFirst < 0 {
			return nil // from loses its last slot: it moves to the end
		}
	}
	newFirst := func(i int) int {
		switch i {
		case from:
			return fromFirst
		case to:
			return toFirst
		}
		return first(i)
	}
	for _, i := range [2]int{from, to} {
		if i > 0 && newFirst(i-1) > newFirst(i) {
			return nil
		}
		if i+1 < len(t.shards) && len(t.shards[i+1].Ranges) > 0 && newFirst(i+1) < newFirst(i) {
			return nil
		}
	}
	nt := &Table{owner: t.owner, shards: slices.Clone(t.shards), readers: t.readers, masters: t.masters}
	nt.owner[slot] = uint16(to)
	nt.shards[from].Ranges = nt.rangesOf(from)
	nt.shards[to].Ranges = nt.rangesOf(to)
	return nt
}

// rangesOf returns the merged, sorted ranges of the slots shard i owns.
func (t *Table) rangesOf(i int) []SlotRange {
	var out []SlotRange
	for slot := 0; slot < SlotCount; slot++ {
		if int(t.owner[slot]) != i {
			continue
		}
		end := slot
		for end+1 < SlotCount && int(t.owner[end+1]) == i {
			end++
		}
		out = append(out, SlotRange{Start: slot, End: end})
		slot = end
	}
	return out
}

// SameNodes reports whether t and o list the same shards in the same
// order, with the same masters and replicas: they may differ only in
// which shard serves which slot, as a table and the one WithSlotOwner
// derives from it for a slot moved between two existing masters do. Two
// nil tables have the same nodes.
func (t *Table) SameNodes(o *Table) bool {
	if t == nil || o == nil {
		return t == o
	}
	if len(t.shards) != len(o.shards) {
		return false
	}
	if len(t.masters) > 0 && &t.masters[0] == &o.masters[0] {
		return true // derived from one another without a rebuild
	}
	for i := range t.shards {
		if t.masters[i] != o.masters[i] || !slices.Equal(t.shards[i].Replicas, o.shards[i].Replicas) {
			return false
		}
	}
	return true
}
