package pool

import "time"

// Stats describes the connections of one address: the pool behind Get and
// the read-only pool behind GetReadOnly added together.
type Stats struct {
	// Active is the number of open connections, idle or borrowed.
	Active int
	// Idle is the number of open connections waiting in the pool.
	Idle int
	// WaitCount is how many times Get had to wait for a connection (with
	// Options.Wait and MaxActive reached). Like redigo's count it is close
	// to, not always exactly, the true number.
	WaitCount int64
	// WaitDuration is the total time spent in those waits.
	WaitDuration time.Duration
	// Dials counts dial attempts, successful or not.
	Dials int64
	// DialErrors counts failed dial attempts, refused AUTH included.
	DialErrors int64
}

// Stats returns a snapshot per address that currently has pools. Counters
// start again from zero after Remove. After Close the map is empty.
func (s *Set) Stats() map[string]Stats {
	s.mu.Lock()
	nodes := make(map[string]*node, len(s.nodes))
	for addr, n := range s.nodes {
		nodes[addr] = &node{rw: n.rw, ro: n.ro}
	}
	s.mu.Unlock()

	out := make(map[string]Stats, len(nodes))
	for addr, n := range nodes {
		var st Stats
		for _, cp := range []*counted{n.rw, n.ro} {
			if cp == nil {
				continue
			}
			ps := cp.pool.Stats()
			st.Active += ps.ActiveCount
			st.Idle += ps.IdleCount
			st.WaitCount += ps.WaitCount
			st.WaitDuration += ps.WaitDuration
			st.Dials += cp.dials.Load()
			st.DialErrors += cp.dialErrors.Load()
		}
		out[addr] = st
	}
	return out
}
