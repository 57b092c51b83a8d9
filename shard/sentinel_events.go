package shard

// sentinelPromoted reports a Sentinel shard's master change to the
// NodeState hook as ReplicaPromoted. Node is the shard's node, as in its
// other events (its name, which keeps its place on the ring, and its
// stable address "sentinel/<name>"), ServerAddr the new master's
// address, and Previous the shard at the old master's address. The first
// master found for a shard is no promotion and is not reported.
func (c *Client) sentinelPromoted(ev failoverEvent) {
	o := c.obs
	if o == nil || !o.state || ev.From == "" || ev.From == ev.To {
		return
	}
	n := c.nodes.get(ev.Node).node
	o.h.NodeState(NodeEvent{
		Kind:       ReplicaPromoted,
		Node:       n,
		ServerAddr: ev.To,
		Previous:   Node{Name: n.Name, Addr: ev.From},
		Time:       ev.At,
	})
}
