package shard

import (
	"sync"
	"sync/atomic"

	"github.com/shardis/shardis/pool"
)

// nodeState is everything the client keeps about one node: its identity,
// health and counters. The state (nodeLife) is created once and never
// removed, so indexes into the node table stay valid for the client's
// life; a node that left the topology is marked retired instead
// (settleNodes).
//
// The node's name follows the topology the client routes by (a ring's new
// shard names once a migration installed it, a Router's renamed nodes):
// renaming publishes a new nodeState for the index, sharing the same
// nodeLife, in a new table list (nodeTable.rename). The command path reads
// node and readOnly without a lock: a nodeState is never written once
// published (a holder of an older one reports the name it had), and the
// node's health and counters, in nodeLife, are the same through either.
type nodeState struct {
	node     Node
	readOnly bool // a replica connection that sends READONLY (cluster reads)
	*nodeLife
}

// nodeLife is the health and the counters of one node, shared by every
// nodeState published for it.
type nodeLife struct {
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
	// downUnreported: the node was listed again while downRetired, and
	// is down without a NodeDown since its NodeRetired; settleNodes, or
	// the first health check that answers, reports it (under trans).
	downUnreported atomic.Bool

	// evQueue holds the node's events not yet given to the NodeState
	// hook, in the order of the changes they tell (queueNodeEvent);
	// evFlushing says a goroutine is giving them (flushNodeEvents).
	// Guarded by evMu.
	evMu       sync.Mutex
	evQueue    []NodeEvent
	evFlushing bool

	commands atomic.Int64
	errors   atomic.Int64
	moved    atomic.Int64
	ask      atomic.Int64
	tryAgain atomic.Int64
	retries  atomic.Int64

	// poolBase holds the pool counters (waits, dials) of the node's
	// pools that started over for a Sentinel shard's new master, so that
	// Stats' counters of the node go on instead of going back to zero.
	// Guarded by Client.poolStatsMu.
	poolBase pool.Stats
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
// when it is new. A node already registered keeps its name: the name of
// the topology the client routes by is given at the next settleNodes or
// nameNodes.
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
	list := t.grow(&nodeState{node: n, nodeLife: new(nodeLife)})
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
	list := t.grow(&nodeState{node: Node{Name: addr + " (replica)", Addr: addr}, readOnly: true, nodeLife: new(nodeLife)})
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

// nodeName is a new name for the node at an index of the table.
type nodeName struct {
	i    int
	name string
}

// rename publishes the nodes of names under their new names: a new
// nodeState for each, sharing its nodeLife, in a new list (the published
// lists, and their spare capacity that grow fills, are never written, so
// readers of an older list keep seeing the names they read).
func (t *nodeTable) rename(names []nodeName) {
	if len(names) == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	old := *t.list.Load()
	list := make([]*nodeState, len(old), cap(old))
	copy(list, old)
	for _, n := range names {
		ns := *list[n.i]
		ns.node.Name = n.name
		list[n.i] = &ns
	}
	t.list.Store(&list)
}

// lookup returns the index of the node with address addr.
func (t *nodeTable) lookup(addr string) (int, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	i, ok := t.byAddr[addr]
	return i, ok
}

// lookupReadOnly returns the index of the read-only (READONLY) entry of
// the replica at addr.
func (t *nodeTable) lookupReadOnly(addr string) (int, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	i, ok := t.byRO[addr]
	return i, ok
}

// get returns node i's state.
func (t *nodeTable) get(i int) *nodeState { return (*t.list.Load())[i] }

// all returns every registered node.
func (t *nodeTable) all() []*nodeState { return *t.list.Load() }

// settleNodes marks retired every node whose address no topology the
// client uses lists now (liveNodes), and un-retires those listed again (a
// node that came back at the same address); it gives every node the name
// that the topology the client routes by gives its address (nameNodes).
// The idle connections of a node that retires are closed now (its pools
// are removed; a command still routed there by a stale map makes new ones
// on demand, and a borrowed connection closes when it is given back). It
// runs after the client installs a topology (a cluster slot map, a
// migration's start or end, a Sentinel shard's replicas) and on every
// health tick, which catches any other change (a Router whose Nodes
// changed). Nothing on the command path reads the mark.
//
// A node registered concurrently, after its topology was read but before
// it was installed, may be marked retired for a moment: the install's own
// settleNodes, which runs after it under the same lock, clears the mark.
func (c *Client) settleNodes() {
	// The events go out once the lock is released: a NodeState hook may
	// use the client, and so install a topology itself.
	retired, relisted := c.settleNodesLocked()
	for _, i := range retired {
		c.flushNodeEvents(i)
	}
	for _, i := range relisted {
		c.reportRelistedDown(i)
	}
}

// reportRelistedDown gives the NodeState hook a NodeDown for node i,
// listed again while it was down when it retired (settleNodesLocked): its
// NodeRetired closed its NodeDown, and it is held down until a health
// check answers, so its commands fail fast; the NodeUp of that answer
// then closes a NodeDown, as every NodeUp does. A health check that
// answered first reported both (noteSuccess).
func (c *Client) reportRelistedDown(i int) {
	ns := c.nodes.get(i)
	ns.trans.Lock()
	if ns.downUnreported.Swap(false) && ns.down.Load() {
		c.queueNodeEvent(NodeDown, i, ns.downCause())
	}
	ns.trans.Unlock()
	c.flushNodeEvents(i)
}

// settleNodesLocked is settleNodes under its lock; it queues the
// NodeRetired events, and returns the entries that retired and the
// entries listed again that are down (a NodeDown to report).
func (c *Client) settleNodesLocked() (retired []int, relisted []int) {
	t := c.nodes
	t.settle.Lock()
	defer t.settle.Unlock()
	all := t.all() // first: a node registered after live was read is left as it is
	live := c.liveNodes()
	for i, ns := range all {
		retire := !live.lists(ns)
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
			ns.downUnreported.Store(false)
			ns.fails.Store(0)
		} else if !retire && ns.downRetired.Swap(false) {
			ns.down.Store(true) // down until its first health check answers
			ns.downUnreported.Store(true)
			relisted = append(relisted, i)
		}
		ns.trans.Unlock()
		if retire {
			retired = append(retired, i)
		}
	}
	// The pools of an address go once every entry of it retired (a
	// master's, and its read-only one if it was a replica once).
	gone := map[string]bool{}
	for _, i := range retired {
		gone[all[i].node.Addr] = true
	}
	for _, ns := range all {
		if !ns.retired.Load() {
			delete(gone, ns.node.Addr)
		}
	}
	for addr := range gone {
		_ = c.pools.Remove(addr) // ErrClosed only: Close closed them
	}
	t.rename(renamed(all, live))
	// Queued under the lock, in order with the NodeDown of a relisting
	// by a later settleNodes (reportRelistedDown), and named as renamed.
	for _, i := range retired {
		c.queueNodeEventOf(NodeEvent{Kind: NodeRetired, AddressLeft: gone[all[i].node.Addr]}, i)
	}
	return retired, relisted
}

// nameNodes gives every node the name that the topology the client routes
// by gives its address (Nodes, Stats, NodeEvent, NodeError and the hooks'
// events name a node alike), without settling which nodes are live: it
// runs when the client switches its routing (switchTo).
func (c *Client) nameNodes() {
	t := c.nodes
	t.settle.Lock()
	defer t.settle.Unlock()
	all := t.all()
	t.rename(renamed(all, c.liveNodes()))
}

// renamed returns the nodes of all whose name live gives otherwise. A
// read-only replica entry keeps its own name: it is not the node that
// a topology lists at that address, but a connection kind to it.
func renamed(all []*nodeState, live liveSet) []nodeName {
	var out []nodeName
	for i, ns := range all {
		if ns.readOnly {
			continue
		}
		if e, ok := live[ns.node.Addr]; ok && e.name != ns.node.Name {
			out = append(out, nodeName{i: i, name: e.name})
		}
	}
	return out
}

// liveSet is, by address, what the topologies the client uses list: the
// name and the entries of the node (liveNodes).
type liveSet map[string]liveEntry

// liveEntry is what liveSet holds of one address.
type liveEntry struct {
	name  string
	kinds uint8 // livePlain, liveReadOnly
}

// The entries of an address that a topology lists.
const (
	// livePlain: the node itself (a cluster master, a ring's shard, a
	// Sentinel shard's master or replica).
	livePlain uint8 = 1 << iota
	// liveReadOnly: its read-only replica connection (a cluster
	// replica).
	liveReadOnly
)

// lists reports whether ns stays live: its address is listed in the
// role of ns's entry (a cluster node whose role changed keeps only the
// entry of its new role).
func (l liveSet) lists(ns *nodeState) bool {
	e, ok := l[ns.node.Addr]
	if !ok {
		return false
	}
	want := livePlain
	if ns.readOnly {
		want = liveReadOnly
	}
	return e.kinds&want != 0
}

// liveNodes returns the addresses of the nodes of every topology the
// client uses now, each with its name and the entries listed: the one it
// routes by, the cluster it follows, both sides of a migration (and of
// the armed migration a rollback turns around), and the replicas of its
// Sentinel shards that serve reads. (named after the shard whose reads they
// serve). An address listed by several
// topologies has the name of the first in that order, so the topology
// the client routes by names it, as Nodes does. A cluster lists its
// masters' plain entries and its replicas' read-only ones: a server
// whose role a failover swapped has the entry of its new role only.
func (c *Client) liveNodes() liveSet {
	live := liveSet{}
	put := func(n Node, kind uint8) {
		e, ok := live[n.Addr]
		if !ok {
			e.name = n.Name
		}
		e.kinds |= kind
		live[n.Addr] = e
	}
	add := func(r Router) {
		switch r := r.(type) {
		case nil:
		case *ClusterRouter:
			if st := r.state.Load(); st != nil {
				for i, n := range st.allNodes { // the masters, then the replicas
					if i < len(st.masters) {
						put(n, livePlain)
					} else {
						put(n, liveReadOnly)
					}
				}
			}
			if p := r.failed.Load(); p != nil {
				for _, f := range *p { // failed, not forgotten (cluster_failed.go)
					kind := livePlain
					if f.replica {
						kind = liveReadOnly
					}
					put(Node{Name: f.addr, Addr: f.addr}, kind)
				}
			}
		default:
			for _, n := range r.Nodes() {
				put(n, livePlain)
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
		// A replica is named after the shard it serves reads of now, not
		// the one that listed it first: a replica re-pointed to another
		// master set moves to that shard's name. While two shards list
		// it (the move is seen by one only), the first in order names
		// it.
		for _, sh := range c.sent.shards {
			if p := sh.replicas.Load(); p != nil {
				for _, i := range *p {
					addr := c.nodes.get(int(i)).node.Addr
					put(Node{Name: sh.replicaName(addr), Addr: addr}, livePlain)
				}
			}
		}
	}
	return live
}
