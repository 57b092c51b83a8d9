package shard

// queueSentinelPromoted queues a Sentinel shard's master change for the
// NodeState hook as ReplicaPromoted, and reports whether it did. Node is
// the shard's node, as in its other events (its name, which keeps its
// place on the ring, and its stable address "sentinel/<name>"),
// ServerAddr the new master's address, and Previous the shard at the old
// master's address. The first master found for a shard is no promotion
// and is not reported.
//
// The event goes through the node's queue (queueNodeEvent), under its
// trans, like the node's other events: it comes after a NodeDown of the
// old master still queued or being given, and never while another event
// of the node is being given. The caller gives it (flushNodeEvents) off
// the goroutine that installed the master (sentinelDeliver).
func (c *Client) queueSentinelPromoted(ev failoverEvent) bool {
	o := c.obs
	if o == nil || !o.state || ev.From == "" || ev.From == ev.To {
		return false
	}
	ns := c.nodes.get(ev.Node)
	ns.trans.Lock()
	n := ns.node
	ns.evMu.Lock()
	ns.evQueue = append(ns.evQueue, NodeEvent{
		Kind:       ReplicaPromoted,
		Node:       n,
		ServerAddr: ev.To,
		Previous:   Node{Name: n.Name, Addr: ev.From},
		Time:       ev.At,
	})
	ns.evMu.Unlock()
	ns.trans.Unlock()
	return true
}

// sentinelDeliver gives the queued events of a Sentinel shard's node i
// and, when probe is set, runs its health check at once, on a goroutine
// of its own: a master change is installed on the goroutine that runs
// the shard's queries (or on its +switch-master subscription's), and a
// hook that uses the client (a Refresh, which waits for the next query)
// must not wait for that goroutine. The caller runs inside the client's
// background work (a query loop or a subscription, both waited for by
// Close), so the counter of that work is above zero here.
func (c *Client) sentinelDeliver(i int, probe bool) {
	c.bg.Add(1)
	go func() {
		defer c.bg.Done()
		c.flushNodeEvents(i)
		if probe && !c.closed.Load() {
			c.probe(i)
		}
	}()
}
