package shard

import (
	"slices"
	"sync"
	"sync/atomic"
)

// nodeState is everything the client keeps about one node: its identity,
// health and counters. It is created once and never removed, so indexes
// into the node table stay valid for the client's life; a node that left
// the topology is marked retired instead (settleNodes).
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

	// retired is set while no topology the client uses lists the node
	// (settleNodes): a cluster node that left the slot map, the old
	// ring's shards once a migration ended, a Sentinel replica no longer
	// listed. A retired node is not health-checked and not in Stats.
	retired atomic.Bool
	// downRetired: the node was down when it retired. A retired node is
	// not health-checked, so it retires up (a command still routed
	// there dials it); it is down again if it comes back before anything
	// answered (settleNodes, noteSuccess).
	downRetired atomic.Bool

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

	settle sync.Mutex // serialises settleNodes
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

// settleNodes marks retired every node whose address no topology the
// client uses lists now (liveAddrs), and un-retires those listed again (a
// node that came back at the same address). The idle connections of a
// node that retires are closed now (its pools are removed; a command still
// routed there by a stale map makes new ones on demand, and a borrowed
// connection closes when it is given back). It runs after the client
// installs a topology (a cluster slot map, a migration's start or end, a
// Sentinel shard's replicas) and on every health tick, which catches any
// other change (a Router whose Nodes changed). Nothing on the command path
// reads the mark.
//
// A node registered concurrently, after its topology was read but before
// it was installed, may be marked retired for a moment: the install's own
// settleNodes, which runs after it under the same lock, clears the mark.
func (c *Client) settleNodes() {
	// The events go out once the lock is released: a NodeState hook may
	// use the client, and so install a topology itself.
	for _, i := range c.settleNodesLocked() {
		c.nodeEvent(NodeRetired, i, nil)
	}
}

// settleNodesLocked is settleNodes under its lock; it returns the nodes
// that retired, one entry per address.
func (c *Client) settleNodesLocked() []int {
	t := c.nodes
	t.settle.Lock()
	defer t.settle.Unlock()
	all := t.all() // first: a node registered after live was read is left as it is
	live := c.liveAddrs()
	var gone []string
	var retired []int
	for i, ns := range all {
		retire := !live[ns.node.Addr]
		if ns.retired.Load() == retire {
			continue
		}
		ns.retired.Store(retire)
		ns.trans.Lock()
		if retire && ns.down.Swap(false) {
			// No health check would bring it up again: a command still
			// routed to it (a stale map, a Router that does not list it)
			// would fail fast for good. Its NodeRetired closes the
			// NodeDown.
			ns.downRetired.Store(true)
			ns.fails.Store(0)
		} else if !retire && ns.downRetired.Swap(false) {
			ns.down.Store(true) // down until its first health check answers
		}
		ns.trans.Unlock()
		if retire && !slices.Contains(gone, ns.node.Addr) {
			gone = append(gone, ns.node.Addr)
			retired = append(retired, i)
		}
	}
	for _, addr := range gone {
		// Every entry of addr (a replica's read-only one too) retired
		// together, as the mark follows the address.
		_ = c.pools.Remove(addr) // ErrClosed only: Close closed them
	}
	return retired
}

// liveAddrs returns the addresses of the nodes of every topology the
// client uses now: the one it routes by, the cluster it follows, both
// sides of a migration (and of the armed migration a rollback turns
// around), and the replicas of its Sentinel shards that serve reads.
func (c *Client) liveAddrs() map[string]bool {
	live := map[string]bool{}
	add := func(r Router) {
		switch r := r.(type) {
		case nil:
		case *ClusterRouter:
			if st := r.state.Load(); st != nil {
				for _, n := range st.allNodes { // masters and replicas
					live[n.Addr] = true
				}
			}
			if p := r.failed.Load(); p != nil {
				for _, a := range *p { // failed, not forgotten (cluster_failed.go)
					live[a] = true
				}
			}
		default:
			for _, n := range r.Nodes() {
				live[n.Addr] = true
			}
		}
	}
	add(c.currentRouter())
	if r := c.cl(); r != nil {
		add(r)
	}
	for m := c.mig.Load(); m != nil; m = m.prev {
		add(m.from)
		if m.next != nil {
			add(m.next.router)
		}
	}
	if c.sent != nil {
		for _, sh := range c.sent.shards {
			if p := sh.replicas.Load(); p != nil {
				for _, i := range *p {
					live[c.nodes.get(int(i)).node.Addr] = true
				}
			}
		}
	}
	return live
}
