package shard

// SetAwaitedRepliesLimit sets the bytes of confirmations each connection
// of s may await (maxAwaitedReplies), so that a test can reach it with
// fewer names.
func SetAwaitedRepliesLimit(s *Subscription, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.awaitLimit = n
}
