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
	// trans serialises marking the node down or up with what follows
	// (the event, ejection or restore), so that they happen in order.
	trans sync.Mutex
	cause atomic.Pointer[nodeDownError] // the last failure, for downErr

	// epoch changes when the node's address moves (a Sentinel shard's
	// new master): connections borrowed before are not used for new
	// commands.
	epoch atomic.Int64

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
	byRO   map[string]int // read-only replica entries, by address
	list   atomic.Pointer[[]*nodeState]
}

func newNodeTable() *nodeTable {
	t := &nodeTable{byAddr: make(map[string]int), byRO: make(map[string]int)}
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
	list := t.grow(&nodeState{node: n})
	t.byAddr[n.Addr] = len(list) - 1
	return len(list) - 1
}

// addReadOnly returns the index of the read-only (READONLY) connection
// entry for the replica at addr, registering it first when it is new.
func (t *nodeTable) addReadOnly(addr string) int {
	t.mu.RLock()
	i, ok := t.byRO[addr]
	t.mu.RUnlock()
	if ok {
		return i
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if i, ok := t.byRO[addr]; ok {
		return i
	}
	list := t.grow(&nodeState{node: Node{Name: addr + " (replica)", Addr: addr}, readOnly: true})
	t.byRO[addr] = len(list) - 1
	return len(list) - 1
}

// grow appends ns to the list and publishes the longer list; t.mu must
// be held. The list grows by doubling: the new entry goes into spare
// capacity that no published list covers, so readers of an older list
// never see it change, and registering the 3,000 nodes of a large cluster
// copies about 6,000 pointers instead of 4.5 million.
func (t *nodeTable) grow(ns *nodeState) []*nodeState {
	list := append(*t.list.Load(), ns)
	t.list.Store(&list)
	return list
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
