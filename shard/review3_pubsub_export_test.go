package shard

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
