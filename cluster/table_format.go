package cluster

import (
	"strconv"
	"strings"
)

// Equal reports whether t and o route every request the same way: every
// slot has a master at the same address, and the replicas fit for reads
// (see Replicas) of every shard have the same addresses. IDs, hostnames
// and shards that serve no slot are not compared, so a table parsed from
// CLUSTER SLOTS (which lists neither empty masters nor loading replicas)
// equals the one parsed from CLUSTER SHARDS of the same cluster. Two nil
// tables are equal.
func (t *Table) Equal(o *Table) bool {
	if t == nil || o == nil {
		return t == o
	}
	if t == o {
		return true
	}
	if t.owner != o.owner {
		return false
	}
	// Shards with slots come first in canonical order, and the owner
	// arrays are equal, so both tables have the same number of them.
	n := withSlots(t)
	if n != withSlots(o) {
		return false
	}
	for i := 0; i < n; i++ {
		if t.masters[i].Addr != o.masters[i].Addr || !sameAddrs(t.readers[i], o.readers[i]) {
			return false
		}
	}
	return true
}

// withSlots returns how many of t's shards serve at least one slot.
func withSlots(t *Table) int {
	n := 0
	for n < len(t.shards) && len(t.shards[n].Ranges) > 0 {
		n++
	}
	return n
}

func sameAddrs(a, b []NodeInfo) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Addr != b[i].Addr {
			return false
		}
	}
	return true
}

// String renders the table one shard per line: the slot ranges, the
// master's address and, in parentheses, the replicas' addresses, each
// followed by its health when that is not online or unknown, e.g.
//
//	0-5460 127.0.0.1:7000 (127.0.0.1:7004)
//	5461-10922 127.0.0.1:7001 (127.0.0.1:7005 loading)
//	10923-16383 127.0.0.1:7002 ()
func (t *Table) String() string {
	if t == nil {
		return "<nil>"
	}
	var b strings.Builder
	for i, s := range t.shards {
		if i > 0 {
			b.WriteByte('\n')
		}
		if len(s.Ranges) == 0 {
			b.WriteString("no-slots")
		}
		for j, r := range s.Ranges {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(r.Start))
			if r.End != r.Start {
				b.WriteByte('-')
				b.WriteString(strconv.Itoa(r.End))
			}
		}
		b.WriteByte(' ')
		writeNode(&b, s.Master)
		b.WriteString(" (")
		for j, r := range s.Replicas {
			if j > 0 {
				b.WriteByte(' ')
			}
			writeNode(&b, r)
		}
		b.WriteByte(')')
	}
	return b.String()
}

func writeNode(b *strings.Builder, n NodeInfo) {
	b.WriteString(n.Addr)
	if n.Health != "" && n.Health != HealthOnline {
		b.WriteByte(' ')
		b.WriteString(n.Health)
	}
}
