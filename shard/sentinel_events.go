package shard

// sentinelPromoted reports a Sentinel shard's master change to the
// NodeState hook as ReplicaPromoted: Node is the shard (its name, which
// keeps its place on the ring) at its new master's address, Previous the
// same shard at the old master's. The first master found for a shard is
// no promotion and is not reported.
func (c *Client) sentinelPromoted(ev failoverEvent) {
	o := c.obs
	if o == nil || !o.state || ev.From == "" || ev.From == ev.To {
		return
	}
	o.h.NodeState(NodeEvent{
		Kind:       ReplicaPromoted,
		Node:       Node{Name: ev.Shard, Addr: ev.To},
		ServerAddr: ev.To,
		Previous:   Node{Name: ev.Shard, Addr: ev.From},
		Time:       ev.At,
	})
}
