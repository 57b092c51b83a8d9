package shard

import "sync"

// subscriptions are the client's open subscriptions, which Close closes,
// and the watchers told when the client starts routing by another
// topology (a migration started, finished or aborted), so that
// subscriptions move their channels with the keys.
type subscriptions struct {
	mu     sync.Mutex
	open   map[*Subscription]struct{}
	closed bool
	topo   topologyWatchers
}

// register adds s; it reports false once the client is closing.
func (r *subscriptions) register(s *Subscription) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return false
	}
	if r.open == nil {
		r.open = make(map[*Subscription]struct{})
	}
	r.open[s] = struct{}{}
	return true
}

// unregister removes s.
func (r *subscriptions) unregister(s *Subscription) {
	r.mu.Lock()
	delete(r.open, s)
	r.mu.Unlock()
}

// closeAll closes every open subscription; later ones are refused.
func (r *subscriptions) closeAll() {
	r.mu.Lock()
	r.closed = true
	open := make([]*Subscription, 0, len(r.open))
	for s := range r.open {
		open = append(open, s)
	}
	r.mu.Unlock()
	for _, s := range open {
		s.Close()
	}
}
