package shard

// AwaitedUnsubscribes returns the most bytes of unsubscribe
// confirmations one connection of s awaits now (awaitedUnsubscribes).
func AwaitedUnsubscribes(s *Subscription) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	most := 0
	for _, sc := range s.conns {
		most = max(most, sc.awaitedUnsubscribes())
	}
	return most
}
