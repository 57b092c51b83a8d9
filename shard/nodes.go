package shard

import (
	"sync"
	"sync/atomic"
)

// nodeState is everything the client keeps about one node: its identity,
// health and counters. It is created once and never removed, so indexes
// into the node table stay valid for the client's life.
type nodeState struct {
	node     Node
	readOnly bool // a replica connection that sends READONLY (cluster reads)

	rtt atomic.Int64 // smoothed PING round trip in nanoseconds; 0 = unknown

	fails atomic.Int32 // consecutive failures
	down  atomic.Bool
	cause atomic.Pointer[nodeDownError] // the last failure, for downErr

	commands atomic.Int64
	errors   atomic.Int64
	moved    atomic.Int64
	ask      atomic.Int64
	tryAgain atomic.Int64
	retries  atomic.Int64
}

// nodeTable is an append-only registry of nodes, indexed by the order in
// which they were first seen. Safe for concurrent use.
type nodeTable struct {
	mu     sync.RWMutex
	byAddr map[string]int
	list   atomic.Pointer[[]*nodeState]
}

func newNodeTable() *nodeTable {
	t := &nodeTable{byAddr: make(map[string]int)}
	empty := []*nodeState{}
	t.list.Store(&empty)
	return t
}

// add returns the index of the node with n's address, registering it first
// when it is new.
func (t *nodeTable) add(n Node) int {
	t.mu.RLock()
	i, ok := t.byAddr[n.Addr]
	t.mu.RUnlock()
	if ok {
		return i
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if i, ok := t.byAddr[n.Addr]; ok {
		return i
	}
	old := *t.list.Load()
	list := make([]*nodeState, len(old), len(old)+1)
	copy(list, old)
	list = append(list, &nodeState{node: n})
	t.list.Store(&list)
	t.byAddr[n.Addr] = len(list) - 1
	return len(list) - 1
}

// addReadOnly returns the index of the read-only (READONLY) connection
// entry for the replica at addr, registering it first when it is new.
func (t *nodeTable) addReadOnly(addr string) int {
	key := "ro:" + addr
	t.mu.RLock()
	i, ok := t.byAddr[key]
	t.mu.RUnlock()
	if ok {
		return i
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if i, ok := t.byAddr[key]; ok {
		return i
	}
	old := *t.list.Load()
	list := make([]*nodeState, len(old), len(old)+1)
	copy(list, old)
	list = append(list, &nodeState{node: Node{Name: addr + " (replica)", Addr: addr}, readOnly: true})
	t.list.Store(&list)
	t.byAddr[key] = len(list) - 1
	return len(list) - 1
}

// lookup returns the index of the node with address addr.
func (t *nodeTable) lookup(addr string) (int, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	i, ok := t.byAddr[addr]
	return i, ok
}

// get returns node i's state.
func (t *nodeTable) get(i int) *nodeState { return (*t.list.Load())[i] }

// all returns every registered node.
func (t *nodeTable) all() []*nodeState { return *t.list.Load() }
