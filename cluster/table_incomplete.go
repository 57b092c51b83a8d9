package cluster

import (
	"fmt"
	"slices"
)

// IncompleteError is the error of a topology that is well formed but
// leaves hash slots without an owner: what every node of a cluster
// reports while a slot is unassigned (a CLUSTER DELSLOTS, a shard
// forgotten with its slots), which a cluster with
// cluster-require-full-coverage no keeps serving the other slots
// through. errors.Is(err, ErrIncomplete) is true for it; errors.As gives
// what the topology did say, so that a client that knows the slot table
// in use can keep following the cluster (see Fill).
type IncompleteError struct {
	// Shards are the shards the topology listed, with the ranges they
	// own.
	Shards []Shard
	// Uncovered are the slot ranges no shard owns, in order.
	Uncovered []SlotRange
}

// Error names the first uncovered range, e.g. "shardis: incomplete slot
// table: slots 5461-10922 not covered".
func (e *IncompleteError) Error() string {
	if len(e.Uncovered) == 0 {
		return ErrIncomplete.Error()
	}
	r := e.Uncovered[0]
	return fmt.Sprintf("%s: %s not covered", ErrIncomplete.Error(), rangeText("slot", r.Start, r.End))
}

// Is makes errors.Is(err, ErrIncomplete) true.
func (e *IncompleteError) Is(target error) bool { return target == ErrIncomplete }

// Fill builds a complete Table from what the topology said, giving each
// uncovered slot to the master that serves it in prev (the table in use)
// when that master is a master of Shards, and to the master of the first
// of Shards otherwise. A slot so filled has no owner in the cluster: a
// command on it gets the server's own answer (CLUSTERDOWN Hash slot not
// served, or a MOVED once the slot is assigned again). With no shard to
// give the slots to, it returns e itself.
func (e *IncompleteError) Fill(prev *Table) (*Table, error) {
	if len(e.Shards) == 0 {
		return nil, e
	}
	shards := make([]Shard, len(e.Shards))
	byMaster := make(map[string]int, len(e.Shards))
	for i, s := range e.Shards {
		s.Ranges = slices.Clone(s.Ranges)
		shards[i] = s
		byMaster[s.Master.Addr] = i
	}
	for _, r := range e.Uncovered {
		for slot := r.Start; slot <= r.End; slot++ {
			k, ok := byMaster[prev.Master(slot).Addr]
			if !ok {
				k = 0
			}
			ranges := shards[k].Ranges
			if n := len(ranges); n > 0 && ranges[n-1].End == slot-1 {
				ranges[n-1].End = slot
			} else {
				shards[k].Ranges = append(ranges, SlotRange{Start: slot, End: slot})
			}
		}
	}
	return NewTable(shards)
}
