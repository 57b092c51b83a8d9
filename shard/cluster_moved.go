package shard

import (
	"context"
	"sync"
	"time"

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
// A table whose nodes changed settles the client's nodes, as applyMoved
// does: addr may be a node that left the old cluster (retired) and is
// back, which stayed out of Stats and unchecked until the next health
// round (for good without health checks).
func (c *Client) applyMovedHere(r *ClusterRouter, slot int, addr string) {
	for {
		st := r.state.Load()
		if st == nil || r.nodes.get(int(st.master[slot])).node.Addr == addr {
			return
		}
		t := st.table.WithSlotOwner(slot, addr)
		if t == st.table || r.moveSlot(st, t, slot) {
			return
		}
		if r.installOver(st, t) {
			c.settleNodes()
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
// calls routed by it that ask for it (judge: a redirect naming no usable
// address ("?"), a node that refuses connections, CLUSTERDOWN): only that
// cluster can say where their slot went. The old cluster's table is
// otherwise never refreshed. One read at a time per cluster, at most one
// per MinRefreshInterval (oldTopoReads): a call that finds one running,
// or held back, is routed by the table that was current, and tries
// again after its backoff.
func (c *Client) refreshOldFor(ctx context.Context, calls []*call) {
	var done *ClusterRouter
	for _, cl := range calls {
		if cl.old == nil || !cl.readOld {
			continue
		}
		cl.readOld = false
		if !cl.reroute || cl.oldSlot < 0 || cl.old == done {
			continue
		}
		done = cl.old
		c.refreshOld(ctx, cl.old, c.nodes.get(cl.node).node.Addr)
	}
}

// oldTopoReads orders the reads of the topology of a migration's old
// cluster, as refresher does the client's own cluster's: one at a time,
// and a new one starts only when the last one started at least
// MinRefreshInterval ago. A read asked for meanwhile is held back and run
// once the interval has passed (owed), so that what the asker saw (a
// slot that left a node) is not lost. Every retry of every command on a
// dead old master's slots asks for a read.
type oldTopoReads struct {
	mu      sync.Mutex
	running bool
	last    time.Time // when the last read started
	owed    bool      // a read was held back
	armed   bool      // a timer runs the one held back (runOldOwed)
}

// startOldRead reports whether a read of r's topology may start now, and
// marks it running; otherwise it owes one, run when the interval has
// passed or the read in flight has ended.
func (c *Client) startOldRead(r *ClusterRouter) bool {
	o := &r.oldTopo
	o.mu.Lock()
	defer o.mu.Unlock()
	every := c.clusterOpts().MinRefreshInterval
	since := time.Since(o.last)
	if o.running || since < every {
		o.owed = true
		if !o.running && !o.armed {
			o.armed = c.goTracked(&c.bg, func() { c.runOldOwed(r, every-since) })
		}
		return false
	}
	o.running, o.last, o.owed = true, time.Now(), false
	return true
}

// endOldRead ends the read startOldRead allowed, and starts the one owed
// meanwhile (rate limited as any).
func (c *Client) endOldRead(r *ClusterRouter) {
	o := &r.oldTopo
	o.mu.Lock()
	o.running = false
	again := o.owed && !o.armed
	o.mu.Unlock()
	if again {
		c.readOldLater(r, "")
	}
}

// runOldOwed waits d (or until Close), then runs the read of r's topology
// that the rate limit held back, while r is still the old cluster of the
// client's migration.
func (c *Client) runOldOwed(r *ClusterRouter, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-c.stop:
	case <-t.C:
	}
	o := &r.oldTopo
	o.mu.Lock()
	o.armed = false
	owed := o.owed
	o.mu.Unlock()
	if m := c.mig.Load(); owed && !c.closed.Load() && m != nil && m.from == r {
		c.readOldLater(r, "")
	}
}

// refreshOldAfter reads the old cluster's topology again, in the
// background, after cl, routed by it, failed for good at its node there:
// a node that hung, whose command timed out (judge). Sending again would
// wait as long once more, so the call is not retried; but the old
// cluster may fail that node over, as the client's own cluster, whose
// topology such a failure refreshes: without it the old table, which
// only a redirect or an unreachable node corrected, sent every later
// command on the node's slots there to time out, for as long as the
// client waited. The node that failed is asked last; the read is rate
// limited as any (oldTopoReads).
func (c *Client) refreshOldAfter(cl *call) {
	if cl.old == nil {
		return
	}
	c.readOldLater(cl.old, c.nodes.get(cl.node).node.Addr)
}

// readOldLater is refreshOld in the background (a final failure's read,
// which nothing waits for; a subscription's, which holds its lock).
func (c *Client) readOldLater(r *ClusterRouter, avoid string) {
	if !c.startOldRead(r) {
		return
	}
	if !c.goTracked(&c.bg, func() {
		defer c.endOldRead(r)
		c.readOld(c.life, r, avoid)
	}) {
		c.endOldRead(r) // closing
	}
}

// refreshOld is refreshOldFor for r: it reads r's topology now (the node
// at avoid, which just failed, and the nodes marked down asked last), unless a
// read is in flight or started less than MinRefreshInterval ago (the
// read then runs later, in the background: oldTopoReads).
func (c *Client) refreshOld(ctx context.Context, r *ClusterRouter, avoid string) {
	if !c.startOldRead(r) {
		return
	}
	defer c.endOldRead(r)
	c.readOld(ctx, r, avoid)
}

// readOld reads r's topology and installs it. The node at avoid and the
// nodes marked down are asked last.
func (c *Client) readOld(ctx context.Context, r *ClusterRouter, avoid string) {
	st := r.state.Load()
	var addrs, last []string
	seen := map[string]bool{}
	add := func(a string, first bool) {
		if seen[a] {
			return
		}
		seen[a] = true
		if first {
			addrs = append(addrs, a)
		} else {
			last = append(last, a)
		}
	}
	if st != nil {
		for _, n := range st.allNodes {
			add(n.Addr, n.Addr != avoid && !c.markedDown(n.Addr))
		}
	}
	for _, s := range r.seeds {
		add(s, s != avoid)
	}
	addrs = append(addrs, last...)
	ctx, cancel := context.WithTimeout(ctx, 2*c.dialTimeout()+c.readTimeout)
	defer cancel()
	t, err := c.discoverFunc()(ctx, addrs, c.topologyDialer)
	if err != nil || st == nil {
		return // the calls try again, within MaxRetryWait
	}
	// Not over a MOVED applied meanwhile, which is newer. Nodes that left
	// the old cluster retire, those back return (nodes.go), as after a
	// refresh of the client's own: without health checks, whose rounds
	// also settle them, a node that left stayed in Stats for good.
	if r.installOver(st, t) && !sameNodeAddrs(st.table, t) {
		c.settleNodes()
	}
}

// markedDown reports whether the node at addr (its plain entry, or a
// replica's read-only one) is marked down.
func (c *Client) markedDown(addr string) bool {
	if i, ok := c.nodes.lookup(addr); ok && c.nodes.get(i).down.Load() {
		return true
	}
	i, ok := c.nodes.lookupReadOnly(addr)
	return ok && c.nodes.get(i).down.Load()
}
