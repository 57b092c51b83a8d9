package shard

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/shardis/shardis/cluster"
)

// NodeEventKind says what happened to a node.
type NodeEventKind uint8

// The node events.
const (
	// NodeDown: enough failures in a row (HealthOptions.FailureLimit)
	// marked the node down; commands to it fail fast. A LOADING or
	// MASTERDOWN reply to a command (a state its health check's PING
	// meets too) counts as such a failure, and a cluster replica that
	// answers a read so is marked down at once; Err is that reply.
	NodeDown NodeEventKind = iota + 1
	// NodeUp: a node marked down answered again.
	NodeUp
	// NodeEjected: a down shard was taken out of the ring
	// (HealthOptions.AutoEject); its keys go to the other shards.
	NodeEjected
	// NodeRestored: an ejected shard is back in the ring.
	NodeRestored
	// ReplicaPromoted: a node that the last slot map showed as a replica
	// is now a master (a failover); Previous is the master it replaced.
	ReplicaPromoted
	// NodeRetired: the node left every topology the client uses (a
	// master the cluster forgot, the old ring's shards after a
	// migration ended, a Sentinel replica no longer listed). It is no
	// longer health-checked nor in Stats, and a NodeDown before it gets
	// no NodeUp. A node that joins again at the same address is
	// checked and listed again (one still down gets a NodeDown again). A cluster server's entries are per role
	// (Node.Name "127.0.0.1:7000" as a master, "127.0.0.1:7000 (replica)"
	// as a replica): after a failover the entry of the role it left
	// retires, while the other goes on.
	NodeRetired
)

var nodeEventNames = [...]string{"", "down", "up", "ejected", "restored", "replica_promoted", "retired"}

// String returns "down", "up", "ejected", "restored", "replica_promoted"
// or "retired".
func (k NodeEventKind) String() string {
	if int(k) < len(nodeEventNames) && k != 0 {
		return nodeEventNames[k]
	}
	return "node_event(" + itoa(int(k)) + ")"
}

// NodeEvent is a change of a node's state.
type NodeEvent struct {
	Kind NodeEventKind
	Node Node
	// ServerAddr is the host:port of Node's server when the event is
	// reported (see CommandEvent.ServerAddr): Node.Addr, but for a
	// Sentinel shard, whose Node.Addr names the shard
	// ("sentinel/<name>"), its master's address (empty while it has
	// none). A Sentinel shard's ReplicaPromoted gives the new master's.
	ServerAddr string
	// Previous is the master a promoted replica replaced (ReplicaPromoted
	// only). For a Sentinel shard it is the shard at the old master's
	// host:port.
	Previous Node
	// Err is the failure that marked the node down (NodeDown only).
	Err error
	// AddressLeft says that no entry of Node.Addr is in use any more
	// (NodeRetired only): the client closed its connections there. A
	// cluster server has an entry per role, and after a failover the
	// entry of the role it left retires while the other goes on
	// (AddressLeft false): what is kept per address (a metric series,
	// say) should go only when it is true.
	AddressLeft bool
	// Time is when the client saw the change.
	Time time.Time
}

// String describes the event, e.g. "node 127.0.0.1:7000 down: ...".
func (e NodeEvent) String() string {
	switch e.Kind {
	case ReplicaPromoted:
		if e.ServerAddr != "" && e.ServerAddr != e.Node.Addr {
			// A Sentinel shard: Node and Previous are the shard, the
			// servers are ServerAddr and Previous.Addr.
			return fmt.Sprintf("%s: replica %s promoted (replaces %s)", e.Node, e.ServerAddr, e.Previous.Addr)
		}
		return fmt.Sprintf("replica %s promoted (replaces %s)", e.Node, e.Previous)
	case NodeDown:
		if e.Err != nil {
			return fmt.Sprintf("node %s down: %v", e.Node, e.Err)
		}
	}
	return fmt.Sprintf("node %s %s", e.Node, e.Kind)
}

// SlotMove is a set of hash slots that moved from one master to another.
type SlotMove struct {
	From, To Node
	// Slots is the number of slots; Ranges are the slots themselves.
	Slots  int
	Ranges []cluster.SlotRange
}

// SlotMapEvent summarizes a change of the cluster slot map.
type SlotMapEvent struct {
	// Moves lists the slots that changed master, grouped by old and new
	// master.
	Moves []SlotMove
	// Added and Removed are the masters that appeared and disappeared.
	Added, Removed []Node
	// Promoted lists the replicas that became masters.
	Promoted []Node
	// Time is when the client reported the change, once it had
	// installed the map it leads to.
	Time time.Time
}

// String summarizes the change, e.g. "1200 slots moved: 127.0.0.1:7000 ->
// 127.0.0.1:7001 (1200: 0-1199)".
func (e SlotMapEvent) String() string {
	var b strings.Builder
	n := 0
	for _, m := range e.Moves {
		n += m.Slots
	}
	fmt.Fprintf(&b, "%d slots moved", n)
	for i, m := range e.Moves {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s -> %s (%d: %s)", m.From.Addr, m.To.Addr, m.Slots, rangesText(m.Ranges, 4))
	}
	for _, list := range []struct {
		what  string
		nodes []Node
	}{{"added", e.Added}, {"removed", e.Removed}, {"promoted", e.Promoted}} {
		if len(list.nodes) > 0 {
			fmt.Fprintf(&b, "; masters %s: %v", list.what, list.nodes)
		}
	}
	return b.String()
}

func rangesText(rs []cluster.SlotRange, limit int) string {
	var parts []string
	for i, r := range rs {
		if i == limit {
			parts = append(parts, fmt.Sprintf("and %d more ranges", len(rs)-limit))
			break
		}
		if r.Start == r.End {
			parts = append(parts, itoa(r.Start))
		} else {
			parts = append(parts, itoa(r.Start)+"-"+itoa(r.End))
		}
	}
	return strings.Join(parts, ",")
}

// diffSlotMaps summarizes the change from old to cur; ok is false when
// nothing an observer cares about changed.
func diffSlotMaps(old, cur *cluster.Table) (ev SlotMapEvent, ok bool) {
	type pair struct{ from, to string }
	idx := map[pair]int{}
	for slot := 0; slot < cluster.SlotCount; slot++ {
		from, to := old.Master(slot).Addr, cur.Master(slot).Addr
		if from == to {
			continue
		}
		k := pair{from, to}
		i, seen := idx[k]
		if !seen {
			i = len(ev.Moves)
			idx[k] = i
			ev.Moves = append(ev.Moves, SlotMove{From: Node{Name: from, Addr: from}, To: Node{Name: to, Addr: to}})
		}
		m := &ev.Moves[i]
		m.Slots++
		if n := len(m.Ranges); n > 0 && m.Ranges[n-1].End == slot-1 {
			m.Ranges[n-1].End = slot
		} else {
			m.Ranges = append(m.Ranges, cluster.SlotRange{Start: slot, End: slot})
		}
	}
	oldMasters, curMasters := addrSet(old.Masters()), addrSet(cur.Masters())
	for _, n := range cur.Masters() {
		if !oldMasters[n.Addr] {
			ev.Added = append(ev.Added, Node{Name: n.Addr, Addr: n.Addr})
		}
	}
	for _, n := range old.Masters() {
		if !curMasters[n.Addr] {
			ev.Removed = append(ev.Removed, Node{Name: n.Addr, Addr: n.Addr})
		}
	}
	for _, p := range promotions(old, cur) {
		ev.Promoted = append(ev.Promoted, p.Node)
	}
	ok = len(ev.Moves) > 0 || len(ev.Added) > 0 || len(ev.Removed) > 0
	return ev, ok
}

// promotions lists the masters of cur that old showed as replicas, with
// the master each was a replica of.
func promotions(old, cur *cluster.Table) []NodeEvent {
	wasReplicaOf := map[string]string{}
	for _, s := range old.Shards() {
		for _, r := range s.Replicas {
			wasReplicaOf[r.Addr] = s.Master.Addr
		}
	}
	var out []NodeEvent
	for _, m := range cur.Masters() {
		if prev, ok := wasReplicaOf[m.Addr]; ok {
			out = append(out, NodeEvent{Kind: ReplicaPromoted, Node: Node{Name: m.Addr, Addr: m.Addr}, ServerAddr: m.Addr, Previous: Node{Name: prev, Addr: prev}})
		}
	}
	return out
}

func addrSet(nodes []cluster.NodeInfo) map[string]bool {
	m := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		m[n.Addr] = true
	}
	return m
}

// slotMapChanged reports a change of r's slot map to the SlotMap and
// NodeState hooks. It is called after the change was installed. What it
// reports is the change from the map the last report ended at to the map
// in use, so the events come in the order of the maps they lead to and,
// applied in the order they come, end at the map in use: two installs
// reported each by its own caller (a MOVED applied while a refresh
// installs its answer) could otherwise be told in the other order, and a
// slot that moved A -> B and back be left at B by the later event. One
// goroutine reports at a time; a change installed meanwhile is reported
// by that one, after the event it is telling (no caller waits for another
// caller's hook), together with any other change made by then.
func (c *Client) slotMapChanged(r *ClusterRouter) {
	o := c.obs
	if o == nil || (!o.slots && !o.state) || r == nil {
		return
	}
	r.repMu.Lock()
	if r.reporting {
		r.repMu.Unlock()
		return // the reporting goroutine reads the map again after its event
	}
	r.reporting = true
	r.repMu.Unlock()
	finished := false
	defer func() {
		if !finished { // a hook that did not return (runtime.Goexit)
			r.repMu.Lock()
			r.reporting = false
			r.repMu.Unlock()
		}
	}()
	for {
		r.repMu.Lock()
		var cur *cluster.Table
		if st := r.state.Load(); st != nil {
			cur = st.table
		}
		old := r.reported
		if cur == nil || cur == old {
			// Read under repMu after the reporting flag was seen set by
			// any caller that returned above: its change is in cur.
			r.reporting, finished = false, true
			r.repMu.Unlock()
			return
		}
		r.reported = cur
		r.repMu.Unlock()
		if old != nil { // the first map is not reported
			c.reportSlotChange(old, cur)
		}
	}
}

// reportSlotChange tells the hooks of the change from old to cur.
func (c *Client) reportSlotChange(old, cur *cluster.Table) {
	o := c.obs
	now := time.Now()
	if o.state {
		for _, ev := range promotions(old, cur) {
			ev.Time = now
			o.h.NodeState(ev)
		}
	}
	if o.slots {
		if ev, ok := diffSlotMaps(old, cur); ok || len(ev.Promoted) > 0 {
			ev.Time = now
			o.h.SlotMap(ev)
		}
	}
}

// queueNodeEvent queues an event of node i for the NodeState hook. The
// caller holds the node's trans, so that the events queue in the order
// of the changes they tell, and calls flushNodeEvents once it has
// released it: the hook may use the client (a command to the node, a
// Refresh, Stats), which could need that lock, and a slow hook must not
// hold up a command whose answer marks the node up.
func (c *Client) queueNodeEvent(kind NodeEventKind, i int, err error) {
	c.queueNodeEventOf(NodeEvent{Kind: kind, Err: err}, i)
}

// queueNodeEventOf queues ev, completed with node i and the time, for
// the NodeState hook (see queueNodeEvent).
func (c *Client) queueNodeEventOf(ev NodeEvent, i int) {
	o := c.obs
	if o == nil || !o.state {
		return
	}
	ns := c.nodes.get(i)
	ev.Node = ns.node
	ev.ServerAddr = c.serverAddr(ns.node)
	ev.Time = time.Now()
	ns.evMu.Lock()
	ns.evQueue = append(ns.evQueue, ev)
	ns.evMu.Unlock()
}

// flushNodeEvents gives the queued events of node i to the NodeState
// hook, in the order they were queued. One goroutine gives a node's
// events at a time: an event queued meanwhile (by a hook that used the
// client, or by another goroutine) is given by that one after the event
// it is giving, so that a NodeUp never comes before the NodeDown it
// closes and no caller waits for another caller's hook.
func (c *Client) flushNodeEvents(i int) {
	o := c.obs
	if o == nil || !o.state {
		return
	}
	ns := c.nodes.get(i)
	ns.evMu.Lock()
	if ns.evFlushing || len(ns.evQueue) == 0 {
		ns.evMu.Unlock()
		return
	}
	ns.evFlushing = true
	finished := false
	defer func() {
		if !finished { // a hook that did not return (runtime.Goexit)
			ns.evMu.Lock()
			ns.evFlushing = false
			ns.evMu.Unlock()
		}
	}()
	for len(ns.evQueue) > 0 {
		ev := ns.evQueue[0]
		ns.evQueue[0] = NodeEvent{}
		ns.evQueue = ns.evQueue[1:]
		ns.evMu.Unlock()
		o.h.NodeState(ev)
		ns.evMu.Lock()
	}
	ns.evQueue = nil
	ns.evFlushing, finished = false, true
	ns.evMu.Unlock()
}

// observeRefresh runs a topology refresh and reports it to the Refresh
// hook. The event is what the refresh itself did: a MOVED applied
// meanwhile, or another refresh that installed its table, met another
// cluster's answer or switched to it meanwhile, changes the table in use
// and the client's counters but not this refresh's event.
func (c *Client) observeRefresh(ctx context.Context, discover func(context.Context) (refreshOutcome, error)) error {
	if c.obs == nil || c.obs.h.Refresh == nil {
		_, err := discover(ctx)
		return err
	}
	start := time.Now()
	out, err := discover(ctx)
	c.obs.h.Refresh(ctx, &RefreshEvent{Start: start, Duration: time.Since(start), Err: err, Changed: out.installed,
		OtherCluster: out.otherCluster, SwitchedCluster: out.switched})
	return err
}
