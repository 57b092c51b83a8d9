package shard

import "sync"

// topologyWatchers are told when a router's placement changes: a cluster
// slot table installed, a ring shard ejected or restored. Subscriptions use
// them to move their channels. Watchers must not block: they are called
// from wherever the change happens.
type topologyWatchers struct {
	mu   sync.Mutex
	next int
	fns  map[int]func()
}

// add registers fn and returns the function that removes it.
func (w *topologyWatchers) add(fn func()) (remove func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fns == nil {
		w.fns = make(map[int]func())
	}
	id := w.next
	w.next++
	w.fns[id] = fn
	return func() {
		w.mu.Lock()
		delete(w.fns, id)
		w.mu.Unlock()
	}
}

// notify calls every watcher.
func (w *topologyWatchers) notify() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, fn := range w.fns {
		fn()
	}
}
