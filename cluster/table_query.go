package cluster

import "slices"

// Shards returns a copy of the table's shards, in canonical order (see
// Table): index i of the result is the shard that ShardOf calls i.
func (t *Table) Shards() []Shard {
	if t == nil {
		return nil
	}
	out := make([]Shard, len(t.shards))
	for i, s := range t.shards {
		out[i] = Shard{Master: s.Master, Replicas: slices.Clone(s.Replicas), Ranges: slices.Clone(s.Ranges)}
	}
	return out
}

// ShardOf returns the index, into Shards, of the shard that serves slot,
// or -1 when slot is not in 0..SlotCount-1.
func (t *Table) ShardOf(slot int) int {
	if t == nil || uint(slot) >= SlotCount {
		return -1
	}
	return int(t.owner[slot])
}

// Master returns the master that serves slot, or the zero NodeInfo when
// slot is not in 0..SlotCount-1. It does not allocate.
func (t *Table) Master(slot int) NodeInfo {
	if t == nil || uint(slot) >= SlotCount {
		return NodeInfo{}
	}
	return t.masters[t.owner[slot]]
}

// Replicas returns the replicas of the shard that serves slot that may
// serve reads (after READONLY): those whose Health is HealthOnline or
// unknown. Replicas still loading their data (HealthLoading, which CLUSTER
// SHARDS reports for a replica that has not synced yet) and failed ones
// are left out, though Shards and Nodes list them. It returns nil when
// there is none or slot is not in 0..SlotCount-1. The slice is shared by
// every caller and must not be modified; Replicas does not allocate.
func (t *Table) Replicas(slot int) []NodeInfo {
	if t == nil || uint(slot) >= SlotCount {
		return nil
	}
	return t.readers[t.owner[slot]]
}

// Masters returns the master of every shard, in the order of Shards: by
// first slot, masters without slots last.
func (t *Table) Masters() []NodeInfo {
	if t == nil {
		return nil
	}
	return slices.Clone(t.masters)
}

// Nodes returns every node of the table: the masters in the order of
// Masters, then the replicas shard by shard (loading ones included).
func (t *Table) Nodes() []NodeInfo {
	if t == nil {
		return nil
	}
	n := len(t.masters)
	for _, s := range t.shards {
		n += len(s.Replicas)
	}
	out := make([]NodeInfo, 0, n)
	out = append(out, t.masters...)
	for _, s := range t.shards {
		out = append(out, s.Replicas...)
	}
	return out
}
