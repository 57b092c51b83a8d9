package shard

// waitRegistrations returns once no pipeline is being registered: it takes
// and releases the lock that registration holds, so a registration that
// started before the call has finished when it returns, and a later one
// sees the client closed.
func (a *autoPipes) waitRegistrations() {
	a.mu.Lock()
	defer a.mu.Unlock()
}
