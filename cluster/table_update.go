package cluster

// WithSlotOwner returns a copy of t in which slot is served by the master
// at addr, as a MOVED redirect reports it. t itself does not change.
//
// When addr is already the master of another shard, that shard gains the
// slot. When addr is one of t's replicas (a replica that was promoted by
// a failover), it leaves its old shard and becomes the master of a new
// shard, keeping its ID and Hostname. When addr is unknown, a new shard
// with just that address is added. The shard that lost the slot keeps its
// other slots, or stays in the table without slots.
//
// WithSlotOwner returns t unchanged when addr already serves slot, when
// addr is "" or when slot is not in 0..SlotCount-1. A client usually also
// schedules a full refresh of the table after a MOVED, since a failover
// or resharding moves many slots at once.
func (t *Table) WithSlotOwner(slot int, addr string) *Table {
	if t == nil || uint(slot) >= SlotCount || addr == "" || t.masters[t.owner[slot]].Addr == addr {
		return t
	}
	if nt := t.withSlotOfMaster(slot, addr); nt != nil {
		return nt
	}
	shards := make([]Shard, len(t.shards), len(t.shards)+1)
	target := -1
	var promoted NodeInfo
	wasReplica := false
	for i, s := range t.shards {
		c := Shard{Master: s.Master}
		if s.Master.Addr == addr {
			target = i
		}
		for _, r := range s.Replicas {
			if r.Addr == addr {
				promoted, wasReplica = r, true
				continue
			}
			c.Replicas = append(c.Replicas, r)
		}
		shards[i] = c
	}
	if target < 0 {
		if len(shards) == maxShards {
			return t
		}
		m := NodeInfo{Addr: addr}
		if wasReplica {
			m = NodeInfo{ID: promoted.ID, Addr: addr, Hostname: promoted.Hostname}
		}
		shards = append(shards, Shard{Master: m})
		target = len(shards) - 1
	}
	owner := t.owner
	owner[slot] = uint16(target)
	return fromOwner(shards, &owner)
}
