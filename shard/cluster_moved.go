package shard

import (
	"context"

	"github.com/shardis/shardis/cluster"
)

// moveSlot installs t in place of st when t has the same nodes as st's
// table (cluster.Table.SameNodes: slot moved between two existing
// masters, as during a reshard) by patching a copy of st: the slot's two
// entries change and the node lists are shared. A full install walks
// every slot and every node, which at a thousand masters made a storm of
// MOVED redirects cost a millisecond and a megabyte and a half each. It
// returns false, installing nothing, when the fast path does not apply or
// when another table was installed since st was read (the caller then
// installs in full, as before).
func (r *ClusterRouter) moveSlot(st *clusterState, t *cluster.Table, slot int) bool {
	if !t.SameNodes(st.table) {
		return false
	}
	si := t.ShardOf(slot)
	if si < 0 || si >= len(st.masters) {
		return false
	}
	idx, ok := r.nodes.lookup(st.masters[si].Addr)
	if !ok {
		return false
	}
	ns := *st
	ns.table = t
	ns.shardOf[slot] = uint16(si)
	ns.master[slot] = int32(idx)
	if !r.state.CompareAndSwap(st, &ns) {
		return false
	}
	r.watch.notify()
	return true
}

// applyMovedHere writes a MOVED into r's table alone, for a cluster the
// client does not route by: the old cluster of a client built with
// Config.Migration, while it waits (its subscriptions are there). No
// slot-map event is reported, no refresh asked for: r is not refreshed.
func (r *ClusterRouter) applyMovedHere(slot int, addr string) {
	for {
		st := r.state.Load()
		if st == nil || r.nodes.get(int(st.master[slot])).node.Addr == addr {
			return
		}
		t := st.table.WithSlotOwner(slot, addr)
		if t == st.table || r.moveSlot(st, t, slot) || r.installOver(st, t) {
			return
		}
	}
}

// oldClusterOf returns the cluster a migration moves away from when the
// node at addr belongs to it and not to the client's own cluster (nil
// otherwise): a MOVED that node answers is about the old cluster's slot
// map, to be written into the old table (applyMovedHere), not into the
// one the client refreshes and routes by once the migration has switched.
func (c *Client) oldClusterOf(addr string) *ClusterRouter {
	m := c.mig.Load()
	if m == nil {
		return nil
	}
	old, ok := m.from.(*ClusterRouter)
	if !ok || old == c.cl() || !old.lists(addr) || c.cl().lists(addr) {
		return nil
	}
	return old
}

// lists reports whether addr is one of the nodes of r's table (false for
// a nil r).
func (r *ClusterRouter) lists(addr string) bool {
	if r == nil {
		return false
	}
	st := r.state.Load()
	if st == nil {
		return false
	}
	for _, n := range st.allNodes {
		if n.Addr == addr {
			return true
		}
	}
	return false
}

// refreshOldFor reads the topology of the old cluster again for the
// calls routed by it that a redirect naming no usable address ("?") sent
// back to it (judge): only that cluster can say where their slot went.
// The old cluster's table is otherwise never refreshed. One read at a
// time per cluster: a call that finds one running is routed by the table
// that was current, and tries again after its backoff.
func (c *Client) refreshOldFor(ctx context.Context, calls []*call) {
	var done *ClusterRouter
	for _, cl := range calls {
		if cl.old == nil || !cl.reroute || cl.oldSlot < 0 || cl.old == done {
			continue
		}
		done = cl.old
		c.refreshOld(ctx, cl.old)
	}
}

// refreshOld is refreshOldFor for r.
func (c *Client) refreshOld(ctx context.Context, r *ClusterRouter) {
	if !r.oldReading.CompareAndSwap(false, true) {
		return
	}
	defer r.oldReading.Store(false)
	st := r.state.Load()
	var addrs []string
	if st != nil {
		for _, n := range st.allNodes {
			addrs = append(addrs, n.Addr)
		}
	}
	addrs = append(addrs, r.seeds...)
	ctx, cancel := context.WithTimeout(ctx, 2*c.dialTimeout()+c.readTimeout)
	defer cancel()
	t, err := c.discoverFunc()(ctx, addrs, c.topologyDialer)
	if err != nil || st == nil {
		return // the calls try again, within MaxRetryWait
	}
	r.installOver(st, t) // not over a MOVED applied meanwhile, which is newer
}
