package shard

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/shard/command"
)

// ClusterRouter routes keys by Redis Cluster hash slot over the client's
// current slot table. It is safe for concurrent use; the table is replaced
// as a whole when the topology changes.
type ClusterRouter struct {
	nodes *nodeTable
	state atomic.Pointer[clusterState]
	watch topologyWatchers // told of every new table (subscriptions)
	seeds []string         // where a refresh looks when no known node answers
	opts  *ClusterOptions  // a cluster the client routes by (New, StartMigration); nil for a migration's From
	// oldTopo orders the reads of a migration's From's topology
	// (refreshOld): one at a time, at most one per MinRefreshInterval.
	oldTopo oldTopoReads
	// migrating are the slots a master answered ASK or TRYAGAIN for:
	// their reads stay off the replicas (cluster_migrating.go).
	migrating migratingSlots
	// stable are the slots whose master confirmed a replica's empty
	// answer lately: such answers stand (cluster_confirm.go).
	stable stableSlots
	// failed are the nodes the cluster still lists that the table leaves
	// out (failed, not forgotten: cluster_failed.go); sorted by address,
	// nil for none.
	failed atomic.Pointer[[]failedNode]
	// answers orders topology queries: a discovery takes a ticket before
	// it asks (asked), and installs its answer only if no discovery that
	// asked later has installed one (newest, under installMu): two
	// refreshes in flight at once (Client.Refresh beside a background
	// one) must not put the older answer in last.
	asked     atomic.Uint64
	installMu sync.Mutex
	newest    uint64
	// reported is the table the last slot-map report ended at (the first
	// table: not reported), and reporting says a goroutine is reporting
	// (Client.slotMapChanged); both under repMu.
	repMu     sync.Mutex
	reported  *cluster.Table
	reporting bool
}

// clusterState is one slot table plus the client's node indexes for it.
type clusterState struct {
	table    *cluster.Table
	master   [cluster.SlotCount]int32 // slot -> node index of its master
	readers  [][]int32                // shard index -> node indexes of its read-only replica connections
	shardOf  [cluster.SlotCount]uint16
	masters  []Node
	allNodes []Node
}

func newClusterRouter(nodes *nodeTable, seeds []string) *ClusterRouter {
	return &ClusterRouter{nodes: nodes, seeds: seeds}
}

// install makes t the current table. It reads t without copying its
// shards (Nodes is one slice: the masters, then the replicas), so that a
// refresh of a thousand-master topology makes little garbage.
func (r *ClusterRouter) install(t *cluster.Table) {
	r.state.Store(r.build(t))
	r.repMu.Lock()
	if r.reported == nil {
		r.reported = t // the first table: later changes are reported from it
	}
	r.repMu.Unlock()
	r.watch.notify()
}

// installOver makes t the current table only if old is still the current
// state, so that a table derived from old (a MOVED applied to it) never
// replaces a newer one a refresh installed meanwhile. It reports whether
// it installed t.
func (r *ClusterRouter) installOver(old *clusterState, t *cluster.Table) bool {
	if !r.state.CompareAndSwap(old, r.build(t)) {
		return false
	}
	r.watch.notify()
	return true
}

// build computes the routing state of t.
func (r *ClusterRouter) build(t *cluster.Table) *clusterState {
	st := &clusterState{table: t}
	all := t.Nodes()
	nm := 0 // the masters come first, in shard order
	for nm < len(all) && all[nm].Role == cluster.RoleMaster {
		nm++
	}
	masterIdx := make([]int32, nm)
	first := make([]int, nm) // each shard's first slot, -1 for none
	st.readers = make([][]int32, nm)
	st.masters = make([]Node, nm)
	st.allNodes = make([]Node, len(all))
	for i, n := range all {
		st.allNodes[i] = Node{Name: n.Addr, Addr: n.Addr}
	}
	for i := range nm {
		st.masters[i] = st.allNodes[i]
		masterIdx[i] = int32(r.nodes.add(st.masters[i]))
		first[i] = -1
	}
	for slot := 0; slot < cluster.SlotCount; slot++ {
		si := t.ShardOf(slot)
		st.shardOf[slot] = uint16(si)
		st.master[slot] = masterIdx[si]
		if first[si] < 0 {
			first[si] = slot
		}
	}
	for i := range nm {
		for _, rep := range t.Replicas(first[i]) {
			st.readers[i] = append(st.readers[i], int32(r.nodes.addReadOnly(rep.Addr)))
		}
	}
	return st
}

// Table returns the current slot table (nil before discovery).
func (r *ClusterRouter) Table() *cluster.Table {
	if st := r.state.Load(); st != nil {
		return st.table
	}
	return nil
}

// Route returns the master that serves key.
func (r *ClusterRouter) Route(key string) (Node, error) {
	st := r.state.Load()
	if st == nil {
		return Node{}, ErrNoNodes
	}
	return r.nodes.get(int(st.master[cluster.Slot(key)])).node, nil
}

// Nodes returns the masters, in slot order.
func (r *ClusterRouter) Nodes() []Node {
	st := r.state.Load()
	if st == nil {
		return nil
	}
	return append([]Node(nil), st.masters...)
}

// AllNodes returns the masters and then their replicas.
func (r *ClusterRouter) AllNodes() []Node {
	st := r.state.Load()
	if st == nil {
		return nil
	}
	return append([]Node(nil), st.allNodes...)
}

// clusterLocator locates keys by slot; a key's group is its slot.
type clusterLocator struct{ r *ClusterRouter }

func (l clusterLocator) locate(key any) (int, int, error) {
	st := l.r.state.Load()
	if st == nil {
		return -1, -1, ErrNoNodes
	}
	var slot int
	switch k := key.(type) {
	case string:
		slot = cluster.Slot(k)
	case []byte:
		slot = cluster.SlotBytes(k)
	default:
		s, ok := command.Arg(key)
		if !ok {
			return -1, -1, fmt.Errorf("%w: key of type %T", ErrBadCommand, key)
		}
		slot = cluster.Slot(s)
	}
	return int(st.master[slot]), slot, nil
}

func (l clusterLocator) groupLabel(group int) string { return fmt.Sprintf("slot %d", group) }
