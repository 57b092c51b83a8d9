package shard

import "context"

// Review3Waiters returns how many Subscribe calls s keeps as waiting for
// its names' confirmations, counted once per name they wait for.
func Review3Waiters(s *Subscription) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, ws := range s.want {
		n += len(ws.waiters)
	}
	return n
}

// Review3ConnsFailed reports whether every connection of the subscription
// has failed: its reader saw the failure (and, h holding the lock, waits
// to handle it).
func (h *HeldSubscription) Review3ConnsFailed() bool {
	for _, sc := range h.s.conns {
		if sc.conn.Err() == nil {
			return false
		}
	}
	return len(h.s.conns) > 0
}

// Review3Ping is Subscription.Ping, the lock being held by h.
func (h *HeldSubscription) Review3Ping(data string) error { return h.s.pingLocked(data) }

// Review3Unsubscribe is Subscription.Unsubscribe, the lock being held by h.
func (h *HeldSubscription) Review3Unsubscribe(channels ...string) error {
	return h.s.removeLocked(context.Background(), kindChannel, channels)
}

// Review3Pending returns how many commands on s's connection to addr
// wait for replies (-1: no connection).
func Review3Pending(s *Subscription, addr string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	sc := s.conns[addr]
	if sc == nil {
		return -1
	}
	return len(sc.pending)
}
