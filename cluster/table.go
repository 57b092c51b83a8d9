package cluster

import (
	"cmp"
	"fmt"
	"slices"
)

// Roles and health states of a NodeInfo.
const (
	RoleMaster  = "master"
	RoleReplica = "replica"

	HealthOnline  = "online"
	HealthFail    = "fail"
	HealthLoading = "loading"
)

// maxShards is how many shards a Table can hold: shard indexes are stored
// as uint16, and noOwner marks a slot without one while a table is built.
const (
	maxShards = 1<<16 - 1
	noOwner   = 1<<16 - 1
)

// NodeInfo describes one node of a cluster as a topology reply shows it.
type NodeInfo struct {
	// ID is the node's 40-character cluster id, or "" when the reply does
	// not give it (CLUSTER SLOTS of old servers).
	ID string
	// Addr is the host:port to dial, already resolved by the endpoint
	// rules of the parsers (see ParseShards).
	Addr string
	// Hostname is the hostname the node announces, or "".
	Hostname string
	// Role is RoleMaster or RoleReplica.
	Role string
	// Health is HealthOnline, HealthFail, HealthLoading, or "" when the
	// reply does not say (CLUSTER SLOTS, CLUSTER NODES without the fail
	// flag).
	Health string
}

// readable reports whether a replica may serve reads: its health is
// online or unknown. A loading replica has not synced yet and a failed
// one does not answer.
func (n NodeInfo) readable() bool {
	return n.Health == "" || n.Health == HealthOnline
}

// SlotRange is a range of hash slots, both ends included.
type SlotRange struct {
	Start, End int
}

// Shard is a master, its replicas and the slots it serves.
type Shard struct {
	Master   NodeInfo
	Replicas []NodeInfo
	Ranges   []SlotRange
}

// Table is an immutable map from every hash slot to the shard that serves
// it. Looking up a slot is one array access. A Table is never modified
// after it is built, so it is safe for concurrent use; WithSlotOwner
// returns a new one.
//
// A Table is kept in a canonical form, so that two tables built from the
// same topology are identical whatever order the reply listed things in:
// shards are sorted by their first slot (shards without slots last, by
// master address), each shard's ranges are sorted and adjacent ranges
// merged, and replicas are sorted by address. Every Role is set from the
// node's place in its shard.
//
// The methods of a nil *Table return zero values.
type Table struct {
	owner   [SlotCount]uint16 // slot -> index into shards
	shards  []Shard
	readers [][]NodeInfo // per shard: the replicas fit for reads
	masters []NodeInfo   // per shard: the master
}

// NewTable validates shards and builds a Table from them. The shards are
// copied; the caller may reuse them.
//
// Every slot from 0 to SlotCount-1 must be served by exactly one shard
// (an *IncompleteError, which matches ErrIncomplete and names the first
// uncovered range, otherwise), every range
// must lie within 0..SlotCount-1 with Start <= End, and every node needs
// an address that no other node of the table uses. Shards without ranges
// are allowed (a master that serves no slots yet). All errors but
// ErrIncomplete wrap ErrMalformed.
func NewTable(shards []Shard) (*Table, error) {
	return newTable(shards, true)
}

// newTable is NewTable; without copy it takes ownership of the shards'
// replica slices instead of copying them (for parsers, whose shards are
// their own).
func newTable(shards []Shard, copyReplicas bool) (*Table, error) {
	if len(shards) > maxShards {
		return nil, fmt.Errorf("%w: %d shards, at most %d are supported", ErrMalformed, len(shards), maxShards)
	}
	owner := new([SlotCount]uint16)
	for i := range owner {
		owner[i] = noOwner
	}
	nodes := len(shards)
	for _, s := range shards {
		nodes += len(s.Replicas)
	}
	seen := make(map[string]int, nodes)
	for i, s := range shards {
		if s.Master.Addr == "" {
			return nil, fmt.Errorf("%w: shard %d: master has no address", ErrMalformed, i)
		}
		if j, dup := seen[s.Master.Addr]; dup {
			return nil, fmt.Errorf("%w: shard %d: address %s is already used in shard %d", ErrMalformed, i, s.Master.Addr, j)
		}
		seen[s.Master.Addr] = i
		for j, r := range s.Replicas {
			if r.Addr == "" {
				return nil, fmt.Errorf("%w: shard %d replica %d: no address", ErrMalformed, i, j)
			}
			if k, dup := seen[r.Addr]; dup {
				return nil, fmt.Errorf("%w: shard %d replica %d: address %s is already used in shard %d", ErrMalformed, i, j, r.Addr, k)
			}
			seen[r.Addr] = i
		}
		for _, r := range s.Ranges {
			if r.Start < 0 || r.End >= SlotCount || r.Start > r.End {
				return nil, fmt.Errorf("%w: shard %d: slot range %d-%d is not within 0-%d", ErrMalformed, i, r.Start, r.End, SlotCount-1)
			}
			for slot := r.Start; slot <= r.End; slot++ {
				if o := owner[slot]; o != noOwner {
					return nil, fmt.Errorf("%w: slot %d is owned by both %s (shard %d) and %s (shard %d)",
						ErrMalformed, slot, shards[o].Master.Addr, o, s.Master.Addr, i)
				}
				owner[slot] = uint16(i)
			}
		}
	}
	var uncovered []SlotRange
	for slot := 0; slot < SlotCount; slot++ {
		if owner[slot] != noOwner {
			continue
		}
		end := slot
		for end+1 < SlotCount && owner[end+1] == noOwner {
			end++
		}
		uncovered = append(uncovered, SlotRange{Start: slot, End: end})
		slot = end
	}
	if len(uncovered) > 0 {
		listed := make([]Shard, len(shards))
		for i, s := range shards {
			listed[i] = Shard{Master: s.Master, Replicas: slices.Clone(s.Replicas), Ranges: slices.Clone(s.Ranges)}
		}
		return nil, &IncompleteError{Shards: listed, Uncovered: uncovered}
	}
	copied := make([]Shard, len(shards))
	for i, s := range shards {
		copied[i] = Shard{Master: s.Master, Replicas: s.Replicas}
		if copyReplicas {
			copied[i].Replicas = slices.Clone(s.Replicas)
		}
	}
	return fromOwner(copied, owner), nil
}

// fromOwner builds a Table from shards whose nodes are already validated
// and an owner array that gives every slot an index into shards. It takes
// ownership of shards (whose Ranges it rebuilds) and reads owner.
func fromOwner(shards []Shard, owner *[SlotCount]uint16) *Table {
	first := make([]int, len(shards))
	for i := range first {
		first[i] = SlotCount
	}
	for slot := SlotCount - 1; slot >= 0; slot-- {
		first[owner[slot]] = slot
	}
	order := make([]int, len(shards))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		return cmp.Or(cmp.Compare(first[a], first[b]), cmp.Compare(shards[a].Master.Addr, shards[b].Master.Addr))
	})
	newIndex := make([]uint16, len(shards))
	t := &Table{
		shards:  make([]Shard, len(shards)),
		readers: make([][]NodeInfo, len(shards)),
		masters: make([]NodeInfo, len(shards)),
	}
	for to, from := range order {
		newIndex[from] = uint16(to)
		s := shards[from]
		s.Master.Role = RoleMaster
		s.Ranges = nil
		for j := range s.Replicas {
			s.Replicas[j].Role = RoleReplica
		}
		slices.SortFunc(s.Replicas, func(a, b NodeInfo) int { return cmp.Compare(a.Addr, b.Addr) })
		if len(s.Replicas) == 0 {
			s.Replicas = nil
		}
		t.shards[to] = s
		t.masters[to] = s.Master
		for _, r := range s.Replicas {
			if r.readable() {
				t.readers[to] = append(t.readers[to], r)
			}
		}
	}
	for slot := 0; slot < SlotCount; {
		o := newIndex[owner[slot]]
		end := slot
		for end+1 < SlotCount && newIndex[owner[end+1]] == o {
			end++
		}
		t.owner[slot] = o
		for s := slot + 1; s <= end; s++ {
			t.owner[s] = o
		}
		t.shards[o].Ranges = append(t.shards[o].Ranges, SlotRange{Start: slot, End: end})
		slot = end + 1
	}
	return t
}

// rangeText renders a range of slots as "slot 5" or "slots 5-9".
func rangeText(word string, start, end int) string {
	if start == end {
		return fmt.Sprintf("%s %d", word, start)
	}
	return fmt.Sprintf("%ss %d-%d", word, start, end)
}
