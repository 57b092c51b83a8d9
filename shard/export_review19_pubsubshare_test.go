package shard

// AwaitedSubscribes returns the most bytes of subscribe confirmations
// one connection of s awaits now (awaitedReplies).
func AwaitedSubscribes(s *Subscription) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	most := 0
	for _, sc := range s.conns {
		most = max(most, sc.awaitedReplies())
	}
	return most
}

// AwaitedConfirmations returns the most bytes of confirmations, of
// subscribes and unsubscribes together, one connection of s awaits now.
func AwaitedConfirmations(s *Subscription) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	most := 0
	for _, sc := range s.conns {
		most = max(most, sc.awaitedReplies()+sc.awaitedUnsubscribes())
	}
	return most
}
